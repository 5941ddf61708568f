#include "tests/support/gesso_env.hpp"

#include <boost/json.hpp>

#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <thread>

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
  return {o.at("account_id").as_int64(), std::string(o.at("api_key").as_string()),
          std::string(o.at("webhook_secret").as_string())};
}

boost::json::object account_show(std::int64_t id) {
  const auto r = gesso_cli({"account", "show", "--account", std::to_string(id), "--json"});
  if (r.exit_code != 0) {
    throw std::runtime_error("account show failed: " + r.err);
  }
  return boost::json::parse(r.out).as_object();
}

namespace {

std::filesystem::path process_temp_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("gesso-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(
          std::filesystem::temp_directory_path() / ("gesso-test-" + std::to_string(getpid())), ignored);
    });
    return d;
  }();
  return dir;
}

std::string new_log_path(const std::string& what) {
  static int counter = 0;
  return (process_temp_dir() / (what + "-" + std::to_string(++counter) + ".log")).string();
}

void show_log_on_failure(const std::string& what, int status, const std::string& path) {
  if (status != 0) {
    // Show why: the log (sanitizer reports included) is otherwise deleted with the test.
    std::ifstream log(path);
    std::cerr << what << " exited with status " << status << "; its log:\n" << log.rdbuf() << std::endl;
  }
}

}  // namespace

env_map shared_env() {
  return {{"GESSO_DATABASE_URL", cluster().url()},
          {"GESSO_MEDIA_DIR", (process_temp_dir() / "media").string()},
          {"GESSO_MEDIA_SIGNING_KEY", test_signing_key},
          {"GESSO_FETCH_ALLOW_NETWORKS", "127.0.0.0/8"},  // the tests' own image hosts and upstreams
          {"GESSO_LOG_LEVEL", "info"},
          {"GESSO_DRAIN_GRACE_MS", "0"}};  // tests that need a grace period set one
}

env_map with_shared(const env_map& extra) {
  env_map env = shared_env();
  for (const auto& [k, v] : extra) {
    env[k] = v;
  }
  return env;
}

gesso_process::gesso_process(const char* program, const env_map& env, const std::string& name,
                             const std::vector<std::string>& args)
    : name_(name), log_path_(new_log_path(name)) {
  process_ = std::make_unique<child_process>(program, args, env, log_path_);
}

gesso_process::~gesso_process() {
  if (!stopped_) {
    try {
      stop();
    } catch (const std::exception&) {
      // the child_process destructor kills it
    }
  }
}

int gesso_process::stop() {
  stopped_ = true;
  process_->send_signal(SIGTERM);
  const int status = process_->wait(std::chrono::seconds(60));
  show_log_on_failure(name_, status, log_path_);
  return status;
}

void gesso_process::signal(int signal) {
  process_->send_signal(signal);
}

int gesso_process::wait_for_exit(std::chrono::milliseconds timeout) {
  stopped_ = true;
  const int status = process_->wait(timeout);
  show_log_on_failure(name_, status, log_path_);
  return status;
}

void gesso_process::kill() {
  stopped_ = true;
  process_->send_signal(SIGKILL);
  process_->wait(std::chrono::seconds(20));
}

env_map server_env(const env_map& extra) {
  env_map env = with_shared({{"GESSO_LISTEN", "127.0.0.1:0"}});
  for (const auto& [k, v] : extra) {
    env[k] = v;
  }
  return env;
}

server_process::server_process(const env_map& extra_env)
    : gesso_process(GESSO_SERVER_BIN, server_env(extra_env), "gesso-server") {
  port_ = port_from_listen_line(process_->read_line(std::chrono::seconds(20)));
  if (extra_env.contains("GESSO_ADMIN_LISTEN")) {
    const std::string line = process_->read_line(std::chrono::seconds(20));
    if (line.find("admin on http://") == std::string::npos) {
      throw std::runtime_error("gesso-server printed no admin address: " + line);
    }
    admin_port_ = static_cast<std::uint16_t>(std::stoi(line.substr(line.rfind(':') + 1)));
  }
}

fake_providers_process::fake_providers_process(const std::string& listen)
    : gesso_process(GESSO_FAKE_PROVIDERS_BIN, {}, "gesso-fake-providers", {"--listen", listen}) {
  const std::string line = process_->read_line(std::chrono::seconds(20));
  const auto at = line.find("http://");
  if (at == std::string::npos) {
    throw std::runtime_error("gesso-fake-providers printed no address: " + line);
  }
  url_ = line.substr(at);
}

process_memory memory_of(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  process_memory m;
  std::string name;
  while (status >> name) {
    std::uint64_t kib = 0;
    if (name == "VmRSS:" && status >> kib) {
      m.rss_bytes = kib * 1024;
    } else if (name == "VmHWM:" && status >> kib) {
      m.peak_rss_bytes = kib * 1024;
    }
    status.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return m;
}

worker_process::worker_process(const env_map& extra_env)
    : gesso_process(GESSO_WORKER_BIN, with_shared(extra_env), "gesso-worker") {
  const std::string line = process_->read_line(std::chrono::seconds(20));
  if (line.find("running") == std::string::npos) {
    throw std::runtime_error("gesso-worker did not start: " + line);
  }
  if (line.find("http://") != std::string::npos) {
    const std::string address = line.substr(0, line.rfind(')'));
    probe_port_ = static_cast<std::uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
  }
}

poll_result poll_until_final(const http_client& client, const std::string& key, const std::string& task_id,
                             std::chrono::seconds timeout) {
  poll_result r;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto reply = client.query(key, task_id);
    if (reply.status != 200) {
      throw std::runtime_error("query answered " + std::to_string(reply.status) + ": " + reply.body);
    }
    r.data = reply.json().at("data").as_object();
    const int status = static_cast<int>(r.data.at("task_status").as_int64());
    if (r.statuses.empty() || r.statuses.back() != status) {
      r.statuses.push_back(status);
    }
    if (const auto* p = r.data.if_contains("progress");
        p != nullptr && p->is_int64() && (r.progress.empty() || r.progress.back() != p->as_int64())) {
      r.progress.push_back(p->as_int64());
    }
    if (status >= 3) {
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("task " + task_id + " did not finish in time");
}

http_reply fetch(const std::string& url, const std::map<std::string, std::string>& headers) {
  const std::string prefix = "http://127.0.0.1:";
  if (!url.starts_with(prefix)) {
    throw std::runtime_error("not a test server URL: " + url);
  }
  const auto slash = url.find('/', prefix.size());
  const auto port = static_cast<std::uint16_t>(std::stoi(url.substr(prefix.size(), slash - prefix.size())));
  return http_client("127.0.0.1", port).request("GET", url.substr(slash), "", headers);
}

std::string temporary_file(const std::string& text, const std::string& suffix) {
  static int counter = 0;
  const auto path = process_temp_dir() / ("file-" + std::to_string(++counter) + suffix);
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

}  // namespace gesso::testing
