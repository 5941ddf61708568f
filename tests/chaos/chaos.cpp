// gesso-chaos: the service's invariants under faults (docs/reliability.md).
//
// Starts deploy/local/cluster.sh (3 servers behind HAProxy, 3 workers, PostgreSQL), drives a steady load
// of creates and polls from many accounts through HAProxy — builtin models with realistic latency, some
// failing, some routed through the task-api engine back into the cluster — while it kill -9s random
// servers and workers (restarting them) and restarts PostgreSQL in fast and immediate mode. Then it
// drains and checks, from what it recorded and from the database, that nothing was lost or charged
// twice. Prints a summary; exits 1 on any violation.
//
// --providers: most models run on gesso-fake-providers (OpenAI Images failing over to fal, Replicate,
// stable-diffusion.cpp, a fal video), which the chaos also kill -9s and restarts and throws into 429
// storms; the invariants are the same.
//
//   gesso-chaos [--duration S] [--rate CREATES_PER_S] [--clients N] [--accounts N] [--kill-every S]
//               [--seed N] [--providers]

#include "tests/chaos/chaos.hpp"

#include <boost/json.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace json = boost::json;
using namespace gesso::chaos;
using gesso::testing::local_cluster;
using steady = std::chrono::steady_clock;

namespace {

options parse_options(int argc, char** argv) {
  options o;
  o.seed = static_cast<unsigned>(std::random_device{}());
  for (int i = 1; i < argc; i += 2) {
    const std::string name = argv[i];
    if (name == "--providers") {
      o.providers = true;
      --i;  // a flag: no value
      continue;
    }
    if (i + 1 == argc) {
      std::cerr << "gesso-chaos: " << name << " wants a value\n";
      std::exit(2);
    }
    const std::string value = argv[i + 1];
    if (name == "--duration") {
      o.duration_s = std::stoi(value);
    } else if (name == "--clients") {
      o.clients = std::stoi(value);
    } else if (name == "--accounts") {
      o.accounts = std::stoi(value);
    } else if (name == "--rate") {
      o.rate = std::stod(value);
    } else if (name == "--kill-every") {
      o.kill_every_s = std::stod(value);
    } else if (name == "--seed") {
      o.seed = static_cast<unsigned>(std::stoul(value));
    } else {
      std::cerr << "gesso-chaos: unknown option " << name << "\n";
      std::exit(2);
    }
  }
  return o;
}

std::string catalog_json(const std::string& upstream_url, const std::string& upstream_key,
                         const fake_provider* fake) {
  json::object models{
      {"chaos-image",
       {{"task_type", "image"},
        {"price", 5},
        {"deadline_seconds", 120},
        {"engine_settings", {{"latency_ms", 400}, {"failure_rate", 0.1}, {"long_side", 256}}}}},
      {"chaos-video",
       {{"task_type", "video"},
        {"price", 9},
        {"duration_seconds", 1},
        {"deadline_seconds", 180},
        {"engine_settings", {{"long_side", 160}, {"fps", 8}}}}},
      {"chaos-fail",
       {{"task_type", "image"},
        {"price", 3},
        {"deadline_seconds", 120},
        {"engine_settings", {{"failure_rate", 1}}}}},
  };
  if (!upstream_key.empty()) {
    models["chaos-remote"] = {{"task_type", "image"},
                              {"price", 7},
                              {"deadline_seconds", 180},
                              {"engine", "task-api"},
                              {"engine_settings",
                               {{"base_url", upstream_url},
                                {"api_key", upstream_key},
                                {"model_id", "chaos-image"},
                                {"poll_interval_ms", 300},
                                {"request_timeout_ms", 3000}}}};
  }
  if (fake != nullptr) {
    for (auto& [name, m] : fake->models()) {
      models[name] = m;
    }
  }
  return json::serialize(json::object{{"models", std::move(models)}});
}

// The cluster, stopped, with its accounts made: the upstream's and opt.accounts clients'.
std::pair<std::string, account_keys> make_accounts(local_cluster& cluster, const options& opt) {
  auto make = [&](const std::string& name) {
    const auto r = cluster.gesso_cli(
        {"account", "create", "--name", name, "--credits", std::to_string(grant), "--json"});
    if (r.exit_code != 0) {
      throw std::runtime_error("account create: " + r.err);
    }
    const auto o = json::parse(r.out).as_object();
    return std::pair{o.at("account_id").as_int64(), std::string(o.at("api_key").as_string())};
  };
  const std::string upstream_key = make("chaos-upstream").second;
  account_keys accounts;
  for (int i = 0; i < opt.accounts; ++i) {
    accounts.push_back(make("chaos-" + std::to_string(i)));
  }
  return {upstream_key, accounts};
}

}  // namespace

int main(int argc, char** argv) {
  const options opt = parse_options(argc, argv);
  std::cout << "gesso-chaos: " << opt.duration_s << " s, " << opt.clients << " clients, " << opt.accounts
            << " accounts, " << opt.rate << " creates/s, a kill every " << opt.kill_every_s << " s, seed "
            << opt.seed << (opt.providers ? ", models on gesso-fake-providers" : "") << std::endl;
  const auto fake = opt.providers ? std::make_unique<fake_provider>() : nullptr;
  const std::string catalog_path =
      (std::filesystem::temp_directory_path() / ("gesso-chaos-catalog-" + std::to_string(getpid()) + ".json"))
          .string();
  std::ofstream(catalog_path) << catalog_json("", "", fake.get());
  std::map<std::string, std::string> env{
      {"GESSO_CATALOG", catalog_path},
      {"GESSO_WORKER_LEASE_MS", "3000"},
      {"GESSO_WORKER_RESCUE_MS", "1000"},
      {"GESSO_WORKER_POLL_MS", "250"},
      {"GESSO_FETCH_ALLOW_NETWORKS", "127.0.0.0/8"},  // the upstream: this cluster
      {"GESSO_LOG_LEVEL", "warn"}};
  env.insert(fake_provider::keys().begin(), fake_provider::keys().end());
  local_cluster cluster({.servers = 3, .workers = 3, .env = env, .start_processes = false});
  const auto [upstream_key, accounts] = make_accounts(cluster, opt);
  std::ofstream(catalog_path) << catalog_json("http://127.0.0.1:" + std::to_string(cluster.port()),
                                              upstream_key, fake.get());
  cluster.run({"start"});

  ledger record;
  std::atomic<bool> stop_load{false};
  std::vector<std::thread> clients;
  for (int c = 0; c < opt.clients; ++c) {
    clients.emplace_back([&, c] { run_client(opt, c, cluster, accounts, record, stop_load); });
  }
  const auto start = steady::now();
  const fault_count faults = inject_faults(opt, cluster, fake.get());
  stop_load = true;
  for (auto& t : clients) {
    t.join();
  }
  const double load_seconds = std::chrono::duration<double>(steady::now() - start).count();

  std::vector<std::string> violations;
  if (!faults.error.empty()) {
    violations.push_back("the chaos itself failed: " + faults.error);
  }
  const double drain_seconds = drain(cluster, violations);
  violations =
      check_and_report(cluster, accounts, record, faults, load_seconds, drain_seconds, std::move(violations));
  std::filesystem::remove(catalog_path);
  return violations.empty() ? 0 : 1;
}
