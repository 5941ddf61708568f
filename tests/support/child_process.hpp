#pragma once
// Real processes for end-to-end tests: start an executable, read its standard output line by line,
// signal it, and collect its exit status.

#include <sys/types.h>
#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace gesso::testing {

class child_process {
 public:
  /// Starts `path` with `args`, the current environment plus `env` (NAME → value); standard output
  /// is read through read_line(), standard error goes to `stderr_path` (or is inherited when empty).
  child_process(const std::string& path, const std::vector<std::string>& args,
                const std::map<std::string, std::string>& env, const std::string& stderr_path = "");
  ~child_process();  ///< SIGKILLs the process if it is still running
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  /// The next line of standard output; throws after `timeout` or at end of output.
  std::string read_line(std::chrono::milliseconds timeout);

  void send_signal(int signal);

  /// Waits for exit: the exit status, 128 + signal number if killed; throws after `timeout`.
  int wait(std::chrono::milliseconds timeout);

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string pending_;
  bool exited_ = false;
  int status_ = 0;
};

/// The result of running a command to completion.
struct command_result {
  int exit_code;
  std::string out;
  std::string err;
};

/// Runs `path args…` with extra environment and returns its exit code and output.
command_result run_command(const std::string& path, const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env);

}  // namespace gesso::testing
