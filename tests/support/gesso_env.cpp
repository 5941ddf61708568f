#include "tests/support/gesso_env.hpp"

#include <boost/json.hpp>

#include <unistd.h>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

namespace gesso::testing {

pg_cluster& cluster() {
  static pg_cluster instance;
  static const bool migrated = [] {
    const auto r = run_command(GESSO_CLI_BIN, {"migrate"}, {{"GESSO_DATABASE_URL", instance.url()}});
    if (r.exit_code != 0) {
      throw std::runtime_error("gesso migrate failed: " + r.err);
    }
    return true;
  }();
  static_cast<void>(migrated);
  return instance;
}

command_result gesso_cli(const std::vector<std::string>& args) {
  return run_command(GESSO_CLI_BIN, args, {{"GESSO_DATABASE_URL", cluster().url()}});
}

test_account make_account(const std::string& name, std::int64_t credits) {
  const auto r =
      gesso_cli({"account", "create", "--name", name, "--credits", std::to_string(credits), "--json"});
  if (r.exit_code != 0) {
    throw std::runtime_error("account create failed: " + r.err);
  }
  const auto o = boost::json::parse(r.out).as_object();
  return {o.at("account_id").as_int64(), std::string(o.at("api_key").as_string())};
}

boost::json::object account_show(std::int64_t id) {
  const auto r = gesso_cli({"account", "show", "--account", std::to_string(id), "--json"});
  if (r.exit_code != 0) {
    throw std::runtime_error("account show failed: " + r.err);
  }
  return boost::json::parse(r.out).as_object();
}

server_process::server_process(const std::map<std::string, std::string>& extra_env) {
  static int counter = 0;
  log_path_ = (std::filesystem::temp_directory_path() /
               ("gesso-server-" + std::to_string(getpid()) + "-" + std::to_string(++counter) + ".log"))
                  .string();
  std::map<std::string, std::string> env{
      {"GESSO_DATABASE_URL", cluster().url()}, {"GESSO_LISTEN", "127.0.0.1:0"}, {"GESSO_LOG_LEVEL", "info"}};
  for (const auto& [k, v] : extra_env) {
    env[k] = v;
  }
  process_ = std::make_unique<child_process>(GESSO_SERVER_BIN, std::vector<std::string>{}, env, log_path_);
  port_ = port_from_listen_line(process_->read_line(std::chrono::seconds(20)));
}

server_process::~server_process() {
  if (!stopped_) {
    try {
      stop();
    } catch (const std::exception&) {
      // the child_process destructor kills it
    }
  }
  std::filesystem::remove(log_path_);
}

int server_process::stop() {
  stopped_ = true;
  process_->send_signal(SIGTERM);
  const int status = process_->wait(std::chrono::seconds(20));
  if (status != 0) {
    // Show why: the server's log (sanitizer reports included) is otherwise deleted with the test.
    std::ifstream log(log_path_);
    std::cerr << "gesso-server exited with status " << status << "; its log:\n" << log.rdbuf() << std::endl;
  }
  return status;
}

}  // namespace gesso::testing
