// gesso-chaos: the service's invariants under faults (docs/reliability.md).
//
// Starts deploy/local/cluster.sh (3 servers behind HAProxy, 3 workers, PostgreSQL), drives a steady load
// of creates and polls from many accounts through HAProxy — builtin models with realistic latency, some
// failing, some routed through the task-api engine back into the cluster — while it kill -9s random
// servers and workers (restarting them) and restarts PostgreSQL in fast and immediate mode. Then it
// drains and checks, from what it recorded and from the database, that nothing was lost or charged
// twice. Prints a summary; exits 1 on any violation.
//
//   gesso-chaos [--duration S] [--rate CREATES_PER_S] [--clients N] [--accounts N] [--kill-every S]
//               [--seed N]

#include "tests/support/local_cluster.hpp"

#include <boost/json.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace json = boost::json;
using namespace gesso::testing;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

struct options {
  int duration_s = 60;
  int clients = 8;
  int accounts = 16;
  double kill_every_s = 3.0;
  double rate = 30.0;  ///< creates a second, over all clients: a steady load below capacity
  unsigned seed = 0;
};

options parse_options(int argc, char** argv) {
  options o;
  o.seed = static_cast<unsigned>(std::random_device{}());
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
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

constexpr std::int64_t grant = 1'000'000;

// What one create came to, as the client saw it.
struct create_record {
  int account = 0;
  enum class kind { accepted, refused, unknown } outcome = kind::unknown;  // unknown: 5xx or no answer
  std::string task_id;
  std::string detail;
};

struct ledger {
  std::mutex mutex;
  std::vector<create_record> creates;
  std::map<std::string, int> by_outcome;  // "200", "503", "502", "no answer", …
  int polls = 0;
  int poll_errors = 0;
  void add(create_record r, const std::string& outcome) {
    std::lock_guard lock(mutex);
    creates.push_back(std::move(r));
    ++by_outcome[outcome];
  }
};

std::string catalog_json(const std::string& upstream_url, const std::string& upstream_key) {
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
  return json::serialize(json::object{{"models", std::move(models)}});
}

std::string pick_model(std::mt19937& rng) {
  const int roll = static_cast<int>(rng() % 100);
  if (roll < 80) {
    return "chaos-image";
  }
  if (roll < 90) {
    return "chaos-remote";
  }
  if (roll < 95) {
    return "chaos-fail";
  }
  return "chaos-video";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) {
      out.push_back(line);
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const options opt = parse_options(argc, argv);
  std::cout << "gesso-chaos: " << opt.duration_s << " s, " << opt.clients << " clients, " << opt.accounts
            << " accounts, " << opt.rate << " creates/s, a kill every " << opt.kill_every_s << " s, seed "
            << opt.seed << std::endl;
  const std::string catalog_path =
      (std::filesystem::temp_directory_path() / ("gesso-chaos-catalog-" + std::to_string(getpid()) + ".json"))
          .string();
  std::ofstream(catalog_path) << catalog_json("", "");
  local_cluster cluster(
      {.servers = 3,
       .workers = 3,
       .env = {{"GESSO_CATALOG", catalog_path},
               {"GESSO_WORKER_LEASE_MS", "3000"},
               {"GESSO_WORKER_RESCUE_MS", "1000"},
               {"GESSO_WORKER_POLL_MS", "250"},
               {"GESSO_FETCH_ALLOW_NETWORKS", "127.0.0.0/8"},  // the upstream is this cluster
               {"GESSO_LOG_LEVEL", "warn"}},
       .start_processes = false});
  auto make = [&](const std::string& name) {
    const auto r = cluster.gesso_cli(
        {"account", "create", "--name", name, "--credits", std::to_string(grant), "--json"});
    if (r.exit_code != 0) {
      throw std::runtime_error("account create: " + r.err);
    }
    const auto o = json::parse(r.out).as_object();
    return std::pair{o.at("account_id").as_int64(), std::string(o.at("api_key").as_string())};
  };
  const auto upstream = make("chaos-upstream");
  std::vector<std::pair<std::int64_t, std::string>> accounts;
  for (int i = 0; i < opt.accounts; ++i) {
    accounts.push_back(make("chaos-" + std::to_string(i)));
  }
  std::ofstream(catalog_path) << catalog_json("http://127.0.0.1:" + std::to_string(cluster.port()),
                                              upstream.second);
  cluster.run({"start"});

  ledger record;
  std::atomic<bool> stop_load{false};
  std::vector<std::thread> clients;
  for (int c = 0; c < opt.clients; ++c) {
    clients.emplace_back([&, c] {
      std::mt19937 rng(opt.seed + static_cast<unsigned>(c));
      const auto client = cluster.client(15s);
      std::vector<std::pair<int, std::string>> mine;
      const auto interval = std::chrono::duration_cast<steady::duration>(
          std::chrono::duration<double>(static_cast<double>(opt.clients) / opt.rate));
      auto next = steady::now() + interval * c / opt.clients;  // spread the clients over one interval
      while (!stop_load) {
        std::this_thread::sleep_until(next);
        next += interval;
        if (next < steady::now()) {
          next = steady::now();  // fell behind (a stalled request): no burst to catch up
        }
        create_record r;
        r.account = static_cast<int>(rng() % accounts.size());
        const std::string body = json::serialize(
            json::object{{"model_id", pick_model(rng)}, {"prompt", "chaos " + std::to_string(rng())}});
        std::string outcome;
        try {
          const auto reply = client.create(accounts[r.account].second, body);
          outcome = std::to_string(reply.status);
          if (reply.status == 200) {
            r.outcome = create_record::kind::accepted;
            r.task_id = std::string(reply.json().at("data").at("task_id").as_string());
            mine.emplace_back(r.account, r.task_id);
          } else if (reply.status < 500) {
            r.outcome = create_record::kind::refused;
            r.detail = reply.body;
          }
        } catch (const std::exception& e) {
          outcome = "no answer";
          r.detail = e.what();
        }
        record.add(std::move(r), outcome);
        if (!mine.empty() && rng() % 2 == 0) {  // poll one of ours
          const auto& [account, id] = mine[rng() % mine.size()];
          bool ok = false;
          try {
            ok = client.query(accounts[account].second, id).status == 200;
          } catch (const std::exception&) {
          }
          std::lock_guard lock(record.mutex);
          ++record.polls;
          record.poll_errors += ok ? 0 : 1;
        }
      }
    });
  }

  // The chaos: a kill -9 of a random server or worker every few seconds, restarted after a moment;
  // PostgreSQL restarted fast at a third of the run and immediately at two thirds.
  std::mt19937 rng(opt.seed);
  int server_kills = 0;
  int worker_kills = 0;
  std::vector<std::string> pg_restarts;
  const auto start = steady::now();
  const auto end = start + std::chrono::seconds(opt.duration_s);
  bool fast_done = false;
  bool immediate_done = false;
  std::string chaos_error;
  try {
    while (steady::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(opt.kill_every_s * 1000)));
      const double elapsed = std::chrono::duration<double>(steady::now() - start).count();
      if (!fast_done && elapsed > opt.duration_s / 3.0) {
        cluster.run({"restart", "postgres", "fast"});
        pg_restarts.push_back("fast");
        fast_done = true;
        continue;
      }
      if (!immediate_done && elapsed > 2.0 * opt.duration_s / 3.0) {
        cluster.run({"restart", "postgres", "immediate"});
        pg_restarts.push_back("immediate");
        immediate_done = true;
        continue;
      }
      const std::string kind = rng() % 2 == 0 ? "server" : "worker";
      const std::string n = std::to_string(1 + rng() % 3);
      cluster.run({"kill", kind, n});
      (kind == "server" ? server_kills : worker_kills)++;
      std::this_thread::sleep_for(std::chrono::milliseconds(300 + rng() % 700));
      cluster.run({"start-one", kind, n});
    }
  } catch (const std::exception& e) {
    chaos_error = e.what();
  }
  stop_load = true;
  for (auto& t : clients) {
    t.join();
  }
  const double load_seconds = std::chrono::duration<double>(steady::now() - start).count();

  // Drain: every process up again, then wait until no task is queued or running.
  std::vector<std::string> violations;
  if (!chaos_error.empty()) {
    violations.push_back("the chaos itself failed: " + chaos_error);
  }
  for (const std::string kind : {"server", "worker"}) {
    for (int n = 1; n <= 3; ++n) {
      try {
        cluster.run({"start-one", kind, std::to_string(n)});
      } catch (const std::exception&) {
        // already running
      }
    }
  }
  const auto drain_started = steady::now();
  std::string open = "?";
  while (steady::now() - drain_started < 240s) {
    try {
      open = lines_of(cluster.psql("SELECT count(*) FROM tasks WHERE status IN (1, 2)")).at(0);
      if (open == "0") {
        break;
      }
    } catch (const std::exception&) {
    }
    std::this_thread::sleep_for(500ms);
  }
  const double drain_seconds = std::chrono::duration<double>(steady::now() - drain_started).count();
  if (open != "0") {
    violations.push_back(open + " tasks still queued or running " + std::to_string(drain_seconds) +
                         " s after the load stopped");
  }

  // The checks.
  auto count = [&](const std::string& sql) { return std::stol(lines_of(cluster.psql(sql)).at(0)); };
  auto expect_zero = [&](const std::string& what, const std::string& sql) {
    const long n = count(sql);
    if (n != 0) {
      violations.push_back(std::to_string(n) + " " + what);
    }
  };
  std::map<std::string, std::string> status_of;  // every task in the database
  std::map<std::string, std::int64_t> account_of;
  for (const auto& line : lines_of(cluster.psql("SELECT id, status, account_id FROM tasks"))) {
    const auto a = line.find('|');
    const auto b = line.find('|', a + 1);
    status_of[line.substr(0, a)] = line.substr(a + 1, b - a - 1);
    account_of[line.substr(0, a)] = std::stoll(line.substr(b + 1));
  }
  int accepted = 0;
  int refused = 0;
  int unknown = 0;
  std::map<int, int> accepted_by_account;
  std::map<int, int> unknown_by_account;
  std::set<std::string> accepted_ids;
  for (const auto& r : record.creates) {
    if (r.outcome == create_record::kind::accepted) {
      ++accepted;
      ++accepted_by_account[r.account];
      accepted_ids.insert(r.task_id);
      const auto it = status_of.find(r.task_id);
      if (it == status_of.end()) {
        violations.push_back("accepted task " + r.task_id + " is not in the database");
      } else if (it->second != "3" && it->second != "4") {
        violations.push_back("accepted task " + r.task_id + " ended in status " + it->second);
      } else if (account_of[r.task_id] != accounts[r.account].first) {
        violations.push_back("accepted task " + r.task_id + " belongs to another account");
      }
    } else if (r.outcome == create_record::kind::refused) {
      ++refused;
    } else {
      ++unknown;
      ++unknown_by_account[r.account];
    }
  }
  if (refused > 0) {
    violations.push_back(std::to_string(refused) + " creates refused with a 4xx (none expected)");
  }
  // Creates that got no answer (or a 5xx) may or may not have made a task: either way is fine, but
  // no account may have more tasks than its accepted creates plus its unanswered ones.
  int unanswered_created = 0;
  for (std::size_t i = 0; i < accounts.size(); ++i) {
    const long in_db =
        count("SELECT count(*) FROM tasks WHERE account_id = " + std::to_string(accounts[i].first));
    const int ok = accepted_by_account[static_cast<int>(i)];
    const int maybe = unknown_by_account[static_cast<int>(i)];
    if (in_db < ok || in_db > ok + maybe) {
      violations.push_back("account " + std::to_string(accounts[i].first) + " has " + std::to_string(in_db) +
                           " tasks for " + std::to_string(ok) + " accepted and " + std::to_string(maybe) +
                           " unanswered creates");
    }
    unanswered_created += static_cast<int>(in_db) - ok;
  }
  expect_zero("tasks not charged exactly once",
              "SELECT count(*) FROM tasks t WHERE (SELECT count(*) FROM ledger l WHERE l.task_id = t.id AND "
              "l.kind = 'charge') <> 1");
  expect_zero("failed tasks not refunded exactly once",
              "SELECT count(*) FROM tasks t WHERE t.status = 4 AND (SELECT count(*) FROM ledger l WHERE "
              "l.task_id = t.id AND l.kind = 'refund') <> 1");
  expect_zero("successful or unfinished tasks refunded",
              "SELECT count(*) FROM tasks t WHERE t.status <> 4 AND EXISTS (SELECT 1 FROM ledger l WHERE "
              "l.task_id = t.id AND l.kind = 'refund')");
  expect_zero("charges that differ from the task's price",
              "SELECT count(*) FROM ledger l JOIN tasks t ON t.id = l.task_id WHERE l.amount <> t.credits");
  expect_zero(
      "accounts whose balance is not grants - charges + refunds",
      "SELECT count(*) FROM accounts a WHERE a.balance <> (SELECT coalesce(sum(CASE l.kind WHEN 'charge' "
      "THEN -l.amount ELSE l.amount END), 0) FROM ledger l WHERE l.account_id = a.id)");
  expect_zero("accounts with a negative balance", "SELECT count(*) FROM accounts WHERE balance < 0");
  const auto ledger_check = cluster.gesso_cli({"ledger", "check"});
  if (ledger_check.exit_code != 0) {
    violations.push_back("gesso ledger check: " + ledger_check.out + ledger_check.err);
  }
  if (server_kills == 0 || worker_kills == 0 || pg_restarts.size() < 2) {
    violations.push_back("the chaos did not happen as planned (run longer than a few kill intervals)");
  }
  const long succeeded = count("SELECT count(*) FROM tasks WHERE status = 3");
  const long failed = count("SELECT count(*) FROM tasks WHERE status = 4");
  const long remote = count("SELECT count(*) FROM tasks WHERE model_id = 'chaos-remote'");

  std::cout << "\n== gesso-chaos summary ==\n"
            << "load: " << load_seconds << " s, " << record.creates.size() << " creates ("
            << static_cast<double>(record.creates.size()) / load_seconds << "/s), " << record.polls
            << " polls (" << record.poll_errors << " without an answer or not 200)\n"
            << "create answers:";
  for (const auto& [outcome, n] : record.by_outcome) {
    std::cout << " " << outcome << "×" << n;
  }
  std::cout << "\n"
            << "accepted: " << accepted << "; unanswered or 5xx: " << unknown << ", of which "
            << unanswered_created << " made a task anyway (all final, charged once)\n"
            << "tasks: " << status_of.size() << " in the database (" << remote
            << " through the task-api engine, plus their upstream tasks): " << succeeded << " succeeded, "
            << failed << " failed and refunded\n"
            << "faults: " << server_kills << " server kill -9, " << worker_kills
            << " worker kill -9, PostgreSQL restarts:";
  for (const auto& m : pg_restarts) {
    std::cout << " " << m;
  }
  std::cout << "\nfailures by reason:";
  for (const auto& line :
       lines_of(cluster.psql("SELECT count(*) || '× ' || left(error, 70) FROM tasks WHERE status = 4 "
                             "GROUP BY error ORDER BY count(*) DESC LIMIT 6"))) {
    std::cout << "\n  " << line;
  }
  std::cout << "\ndrain: " << drain_seconds << " s until every task was final\n"
            << "violations: " << violations.size() << "\n";
  for (const auto& v : violations) {
    std::cout << "  VIOLATION: " << v << "\n";
  }
  std::filesystem::remove(catalog_path);
  return violations.empty() ? 0 : 1;
}
