#include "tests/chaos/chaos.hpp"

#include <boost/json.hpp>

#include <algorithm>
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
    const auto [model, marker] =
        opt.providers ? pick_provider_model(rng) : std::pair<std::string, std::string>{pick_model(rng), ""};
    const std::string body = json::serialize(
        json::object{{"model_id", model}, {"prompt", "chaos " + std::to_string(rng()) + marker}});
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

namespace {

enum class fault { server, worker, provider_restart, storm };

// Faults drawn from a shuffled deck holding each kind once, so every kind happens in a short run.
class fault_deck {
 public:
  explicit fault_deck(bool with_provider) : with_provider_(with_provider) {}
  fault next(std::mt19937& rng) {
    if (deck_.empty()) {
      deck_ = {fault::server, fault::worker};
      if (with_provider_) {
        deck_.insert(deck_.end(), {fault::provider_restart, fault::storm});
      }
      std::shuffle(deck_.begin(), deck_.end(), rng);
    }
    const fault f = deck_.back();
    deck_.pop_back();
    return f;
  }

 private:
  bool with_provider_;
  std::vector<fault> deck_;
};

// A kill -9 of a random server or worker, started again after 0.3–1 s; a restart of the fake provider
// after as long down; or a 429 storm of 2–4 s.
void inject_one(fault f, std::mt19937& rng, gesso::testing::local_cluster& cluster, fake_provider* fake,
                fault_count& faults) {
  const auto down_for = std::chrono::milliseconds(300 + rng() % 700);
  if (f == fault::provider_restart) {
    faults.storm_refusals += fake->storm_refusals();  // forgotten by the restart
    fake->restart(down_for);
    ++faults.provider_restarts;
  } else if (f == fault::storm) {
    fake->storm(2 + static_cast<int>(rng() % 3));
    ++faults.storms;
  } else {
    const std::string kind = f == fault::server ? "server" : "worker";
    const std::string n = std::to_string(1 + rng() % 3);
    cluster.run({"kill", kind, n});
    (f == fault::server ? faults.server_kills : faults.worker_kills)++;
    std::this_thread::sleep_for(down_for);
    cluster.run({"start-one", kind, n});
  }
}

}  // namespace

fault_count inject_faults(const options& opt, gesso::testing::local_cluster& cluster, fake_provider* fake) {
  fault_count faults;
  faults.with_provider = fake != nullptr;
  std::mt19937 rng(opt.seed);
  fault_deck deck(fake != nullptr);
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
      inject_one(deck.next(rng), rng, cluster, fake, faults);
    }
    if (fake != nullptr) {
      faults.storm_refusals += fake->storm_refusals();
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
