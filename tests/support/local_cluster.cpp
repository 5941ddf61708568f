#include "tests/support/local_cluster.hpp"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>

namespace gesso::testing {
namespace fs = std::filesystem;

namespace {

// A base port for the load balancer with room for the servers above it, away from the kernel's
// ephemeral range (32768+) and different for concurrent test processes.
std::uint16_t base_port() {
  return static_cast<std::uint16_t>(20000 + (getpid() % 1200) * 10);
}

}  // namespace

local_cluster::local_cluster(local_cluster_settings settings)
    : settings_(std::move(settings)),
      dir_((fs::temp_directory_path() / ("gesso-cluster-" + std::to_string(getpid()))).string()),
      port_(base_port()) {
  fs::remove_all(dir_);
  run({settings_.start_processes ? "start" : "start-db"});
}

local_cluster::~local_cluster() {
  try {
    run({"stop"});
  } catch (const std::exception&) {
    // best effort: a failed stop leaves processes that the next run's start refuses loudly
  }
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

std::map<std::string, std::string> local_cluster::script_env() const {
  auto env = settings_.env;
  env["CLUSTER_DIR"] = dir_;
  env["CLUSTER_PORT"] = std::to_string(port_);
  env["CLUSTER_SERVERS"] = std::to_string(settings_.servers);
  env["CLUSTER_WORKERS"] = std::to_string(settings_.workers);
  env["CLUSTER_BIN"] = fs::path(GESSO_SERVER_BIN).parent_path().string();
  return env;
}

std::string local_cluster::run(const std::vector<std::string>& args) const {
  const auto r = run_command(std::string(GESSO_SOURCE_DIR) + "/deploy/local/cluster.sh", args, script_env());
  if (r.exit_code != 0) {
    std::string what = "cluster.sh";
    for (const auto& a : args) {
      what += " " + a;
    }
    throw std::runtime_error(what + " failed (" + std::to_string(r.exit_code) + "): " + r.out + r.err);
  }
  return r.out;
}

command_result local_cluster::gesso_cli(const std::vector<std::string>& args) const {
  return run_command(GESSO_CLI_BIN, args,
                     {{"GESSO_DATABASE_URL", "host=" + dir_ + " port=5432 user=gesso dbname=postgres"}});
}

std::string local_cluster::psql(const std::string& sql) const {
  const auto r = run_command("/usr/bin/psql",
                             {"-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", dir_, "-U", "gesso",
                              "-d", "postgres", "-c", sql},
                             {});
  if (r.exit_code != 0) {
    throw std::runtime_error("psql failed: " + r.err);
  }
  return r.out;
}

}  // namespace gesso::testing
