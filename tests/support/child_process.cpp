#include "tests/support/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace gesso::testing {
namespace {

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    if (!extra.contains(name)) {
      out.push_back(entry);
    }
  }
  for (const auto& [name, value] : extra) {
    out.push_back(name + "=" + value);
  }
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

}  // namespace

child_process::child_process(const std::string& path, const std::vector<std::string>& args,
                             const std::map<std::string, std::string>& env, const std::string& stderr_path) {
  int out_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  std::vector<std::string> argv_strings{path};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<std::string> env_strings = merged_environment(env);
  auto argv = pointers(argv_strings);
  auto envp = pointers(env_strings);
  pid_ = fork();
  if (pid_ < 0) {
    throw std::runtime_error("fork failed");
  }
  if (pid_ == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    if (!stderr_path.empty()) {
      const int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (err >= 0) {
        dup2(err, STDERR_FILENO);
      }
    }
    execve(path.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  stdout_fd_ = out_pipe[0];
}

child_process::~child_process() {
  if (!exited_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (stdout_fd_ >= 0) {
    close(stdout_fd_);
  }
}

std::string child_process::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (const auto nl = pending_.find('\n'); nl != std::string::npos) {
      std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      return line;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      throw std::runtime_error("no line on standard output in time; got so far: " + pending_);
    }
    pollfd p{stdout_fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      continue;
    }
    std::array<char, 4096> chunk{};
    const ssize_t n = read(stdout_fd_, chunk.data(), chunk.size());
    if (n <= 0) {
      throw std::runtime_error("standard output closed; got so far: " + pending_);
    }
    pending_.append(chunk.data(), static_cast<std::size_t>(n));
  }
}

void child_process::send_signal(int signal) {
  if (!exited_) {
    kill(pid_, signal);
  }
}

int child_process::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!exited_) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exited_ = true;
      status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("process " + std::to_string(pid_) + " did not exit in time");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status_;
}

command_result run_command(const std::string& path, const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env) {
  const auto err_path = std::filesystem::temp_directory_path() / ("gesso-cmd-" + std::to_string(getpid()) +
                                                                  "-" + std::to_string(std::rand()) + ".err");
  command_result result{};
  {
    child_process child(path, args, env, err_path.string());
    try {
      for (;;) {
        result.out += child.read_line(std::chrono::seconds(60)) + "\n";
      }
    } catch (const std::runtime_error&) {
      // end of output
    }
    result.exit_code = child.wait(std::chrono::seconds(60));
  }
  std::ifstream err(err_path);
  std::stringstream text;
  text << err.rdbuf();
  result.err = text.str();
  std::filesystem::remove(err_path);
  return result;
}

}  // namespace gesso::testing
