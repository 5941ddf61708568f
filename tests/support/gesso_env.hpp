#pragma once
// The environment end-to-end tests run in: one PostgreSQL cluster per test process (migrated with
// the real `gesso migrate`), accounts made with the real CLI, and real gesso-server processes.

#include "tests/support/child_process.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/pg_cluster.hpp"

#include <boost/json/object.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace gesso::testing {

/// The process-wide cluster, started on first use and migrated.
pg_cluster& cluster();

/// Runs the real `gesso` CLI against the cluster.
command_result gesso_cli(const std::vector<std::string>& args);

/// An account and the API key the CLI printed for it.
struct test_account {
  std::int64_t id = 0;
  std::string key;
};

/// `gesso account create --name NAME --credits N --json`.
test_account make_account(const std::string& name, std::int64_t credits);

/// `gesso account show --account ID --json`.
boost::json::object account_show(std::int64_t id);

/// Extra environment for a process: NAME → value.
using env_map = std::map<std::string, std::string>;

/// A running gesso-server on 127.0.0.1 and a free port, stopped with SIGTERM.
class server_process {
 public:
  explicit server_process(const std::map<std::string, std::string>& extra_env = {});
  ~server_process();  ///< stop() if still running

  /// SIGTERM and wait; returns the exit status (0 expected).
  int stop();

  http_client client() const { return http_client("127.0.0.1", port_); }
  std::uint16_t port() const { return port_; }
  const std::string& log_path() const { return log_path_; }

 private:
  std::string log_path_;
  std::unique_ptr<child_process> process_;
  std::uint16_t port_ = 0;
  bool stopped_ = false;
};

}  // namespace gesso::testing
