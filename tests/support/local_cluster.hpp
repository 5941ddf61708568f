#pragma once
// deploy/local/cluster.sh driven from a test: PostgreSQL, N servers behind HAProxy and M workers, all
// real processes, in a private directory and port range; stopped on destruction.

#include "tests/support/child_process.hpp"
#include "tests/support/http_client.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gesso::testing {

struct local_cluster_settings {
  int servers = 3;
  int workers = 3;
  std::map<std::string, std::string> env = {};  ///< GESSO_* for every server and worker
  bool start_processes = true;  ///< false: only the database (cluster.sh start-db); run({"start"}) later
};

class local_cluster {
 public:
  explicit local_cluster(local_cluster_settings settings = {});
  ~local_cluster();
  local_cluster(const local_cluster&) = delete;
  local_cluster& operator=(const local_cluster&) = delete;

  /// Runs `cluster.sh args…`; throws with its output when it fails.
  std::string run(const std::vector<std::string>& args) const;
  /// Runs the real `gesso` CLI against the cluster's database.
  command_result gesso_cli(const std::vector<std::string>& args) const;
  /// Runs SQL with psql against the cluster's database (unaligned, tuples only).
  std::string psql(const std::string& sql) const;

  /// A client of the load balancer.
  http_client client(std::chrono::milliseconds timeout = std::chrono::seconds(60)) const {
    return http_client("127.0.0.1", port_, timeout);
  }
  std::uint16_t port() const { return port_; }
  const std::string& dir() const { return dir_; }

 private:
  std::map<std::string, std::string> script_env() const;
  local_cluster_settings settings_;
  std::string dir_;
  std::uint16_t port_ = 0;
};

}  // namespace gesso::testing
