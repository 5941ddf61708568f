#include "tests/chaos/chaos.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <random>
#include <sstream>
#include <thread>

namespace gesso::chaos {
namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

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

}  // namespace

void run_client(const options& opt, int c, gesso::testing::local_cluster& cluster,
                const account_keys& accounts, ledger& record, const std::atomic<bool>& stop) {
  std::mt19937 rng(opt.seed + static_cast<unsigned>(c));
  const auto client = cluster.client(15s);
  std::vector<std::pair<int, std::string>> mine;
  const auto interval = std::chrono::duration_cast<steady::duration>(
      std::chrono::duration<double>(static_cast<double>(opt.clients) / opt.rate));
  auto next = steady::now() + interval * c / opt.clients;  // spread the clients over one interval
  while (!stop) {
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
}

fault_count inject_faults(const options& opt, gesso::testing::local_cluster& cluster) {
  fault_count faults;
  std::mt19937 rng(opt.seed);
  const auto start = steady::now();
  const auto end = start + std::chrono::seconds(opt.duration_s);
  bool fast_done = false;
  bool immediate_done = false;
  try {
    while (steady::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(opt.kill_every_s * 1000)));
      const double elapsed = std::chrono::duration<double>(steady::now() - start).count();
      if (!fast_done && elapsed > opt.duration_s / 3.0) {
        cluster.run({"restart", "postgres", "fast"});
        faults.pg_restarts.push_back("fast");
        fast_done = true;
        continue;
      }
      if (!immediate_done && elapsed > 2.0 * opt.duration_s / 3.0) {
        cluster.run({"restart", "postgres", "immediate"});
        faults.pg_restarts.push_back("immediate");
        immediate_done = true;
        continue;
      }
      const std::string kind = rng() % 2 == 0 ? "server" : "worker";
      const std::string n = std::to_string(1 + rng() % 3);
      cluster.run({"kill", kind, n});
      (kind == "server" ? faults.server_kills : faults.worker_kills)++;
      std::this_thread::sleep_for(std::chrono::milliseconds(300 + rng() % 700));
      cluster.run({"start-one", kind, n});
    }
  } catch (const std::exception& e) {
    faults.error = e.what();
  }
  return faults;
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

}  // namespace gesso::chaos
