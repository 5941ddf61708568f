#pragma once
// The environment end-to-end tests run in: one PostgreSQL cluster per test process (migrated with
// the real `gesso migrate`), accounts made with the real CLI, and real gesso-server processes.

#include "tests/support/child_process.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/pg_cluster.hpp"

#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gesso::testing {

/// The process-wide cluster, started on first use and migrated.
pg_cluster& cluster();

/// Runs the real `gesso` CLI against the cluster.
command_result gesso_cli(const std::vector<std::string>& args);

/// An account and the API key the CLI printed for it.
struct test_account {
  std::int64_t id = 0;
  std::string key;
  std::string webhook_secret = {};
};

/// `gesso account create --name NAME --credits N --json`.
test_account make_account(const std::string& name, std::int64_t credits);

/// `gesso account show --account ID --json`.
boost::json::object account_show(std::int64_t id);

/// Extra environment for a process: NAME → value.
using env_map = std::map<std::string, std::string>;

/// The media signing key every test process uses, so tests can sign links themselves.
inline constexpr const char* test_signing_key = "test-signing-key-0123456789abcdef0123456789";

/// What servers and workers of this test process share: the database, a private media directory,
/// the signing key, loopback allowed for fetching (the tests' image hosts), and logs.
env_map shared_env();

/// A Gesso process started for a test: its log is kept in a file and shown if it exits badly;
/// it is stopped with SIGTERM when the test is done with it.
class gesso_process {
 public:
  gesso_process(const char* program, const env_map& env, const std::string& name,
                const std::vector<std::string>& args = {});
  virtual ~gesso_process();  ///< stop() if still running
  gesso_process(const gesso_process&) = delete;
  gesso_process& operator=(const gesso_process&) = delete;

  /// SIGTERM and wait; returns the exit status (0 expected).
  int stop();
  /// SIGKILL: a crash.
  void kill();
  /// Sends `signal` and returns at once; stop() or wait_for_exit() collects the process.
  void signal(int signal);
  /// Waits for the process to exit by itself; returns the exit status.
  int wait_for_exit(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  /// Where the process's standard output and error (its JSON log lines) are written.
  const std::string& log_path() const { return log_path_; }
  /// The process id (for /proc readings such as memory_of).
  int pid() const { return process_->pid(); }

 protected:
  std::string name_;
  std::string log_path_;
  std::unique_ptr<child_process> process_;
  bool stopped_ = false;
};

/// A running gesso-server on 127.0.0.1 and a free port.
class server_process : public gesso_process {
 public:
  explicit server_process(const env_map& extra_env = {});

  http_client client() const { return http_client("127.0.0.1", port_); }
  std::uint16_t port() const { return port_; }
  /// The admin listener's port, when GESSO_ADMIN_LISTEN asked for one.
  std::uint16_t admin_port() const { return admin_port_; }

 private:
  std::uint16_t port_ = 0;
  std::uint16_t admin_port_ = 0;
};

/// A running gesso-worker.
class worker_process : public gesso_process {
 public:
  explicit worker_process(const env_map& extra_env = {});
  /// The probe listener's port, when GESSO_WORKER_LISTEN asked for one.
  std::uint16_t probe_port() const { return probe_port_; }

 private:
  std::uint16_t probe_port_ = 0;
};

/// A running gesso-fake-providers on 127.0.0.1 and a free port (docs/fake-providers.md), or on `listen`
/// ("127.0.0.1:PORT": the same address again after a restart).
class fake_providers_process : public gesso_process {
 public:
  explicit fake_providers_process(const std::string& listen = "127.0.0.1:0");
  /// http://127.0.0.1:PORT
  const std::string& url() const { return url_; }

 private:
  std::string url_;
};

/// A process's resident memory now and at its peak (VmRSS, VmHWM of /proc/PID/status).
struct process_memory {
  std::uint64_t rss_bytes = 0;
  std::uint64_t peak_rss_bytes = 0;
};
process_memory memory_of(int pid);

/// Polls a task until it is final (3 or 4), returning every task_status seen in order and the last data.
struct poll_result {
  std::vector<int> statuses;
  std::vector<std::int64_t> progress;  ///< each non-null progress value seen, in order, repeats dropped
  boost::json::object data;
};
poll_result poll_until_final(const http_client& client, const std::string& key, const std::string& task_id,
                             std::chrono::seconds timeout = std::chrono::seconds(90));

/// GET of an absolute URL on the test server (http://127.0.0.1:PORT/…).
http_reply fetch(const std::string& url, const std::map<std::string, std::string>& headers = {});

/// Writes `text` to a new temporary file and returns its path (removed at process exit).
std::string temporary_file(const std::string& text, const std::string& suffix);

}  // namespace gesso::testing
