#pragma once
// What gesso-chaos's parts share: its options, the clients' record of every create, and the cluster.

#include "tests/support/local_cluster.hpp"

#include <boost/json/object.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace gesso::testing {
class fake_providers_process;
}

namespace gesso::chaos {

struct options {
  int duration_s = 60;
  int clients = 8;
  int accounts = 16;
  double kill_every_s = 3.0;
  double rate = 30.0;  ///< creates a second, over all clients: a steady load below capacity
  unsigned seed = 0;
  bool providers = false;  ///< --providers: models on gesso-fake-providers, restarted and stormed
};

/// Credits granted to every account.
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

/// The gesso-fake-providers of --providers, on one port for the whole run.
class fake_provider {
 public:
  fake_provider();
  ~fake_provider();
  const std::string& url() const { return url_; }
  /// kill -9, down for `down_for`, then started again on the same port with nothing remembered.
  void restart(std::chrono::milliseconds down_for);
  /// Every create answers 429 with Retry-After for `seconds` (POST /faults/storm).
  void storm(int seconds);
  /// Creates refused by storms since the last restart (GET /stats).
  int storm_refusals();
  /// The catalog's provider models, routed to this fake.
  boost::json::object models() const;
  /// The key variables those routes name, for the workers' environment.
  static const std::map<std::string, std::string>& keys();

 private:
  gesso::testing::http_client client() const;
  std::unique_ptr<gesso::testing::fake_providers_process> process_;
  std::string url_;
};

/// A model for one create of --providers, and a marker for its prompt ("" or " [fake:…]").
std::pair<std::string, std::string> pick_provider_model(std::mt19937& rng);

/// Each account's id and API key.
using account_keys = std::vector<std::pair<std::int64_t, std::string>>;

/// One client's loop (client `c` of opt.clients): creates at its share of the rate from random accounts
/// and polls one of its tasks every other time, until `stop` is set.
void run_client(const options& opt, int c, gesso::testing::local_cluster& cluster,
                const account_keys& accounts, ledger& record, const std::atomic<bool>& stop);

/// What the faults came to.
struct fault_count {
  int server_kills = 0;
  int worker_kills = 0;
  std::vector<std::string> pg_restarts;
  bool with_provider = false;  ///< --providers
  int provider_restarts = 0;
  int storms = 0;
  int storm_refusals = 0;  ///< creates the fake refused in storms (counted before each restart)
  std::string error;       ///< the chaos itself failed
};

/// Until the run's end: a kill -9 of a random server or worker every few seconds, restarted after a
/// moment; PostgreSQL restarted fast at a third of the run and immediately at two thirds. With a fake
/// provider, half the faults are its: a kill -9 and restart, or a 429 storm of a few seconds.
fault_count inject_faults(const options& opt, gesso::testing::local_cluster& cluster, fake_provider* fake);

/// After the load: every process up again, then every task final (or a violation); answers the seconds
/// it took.
double drain(gesso::testing::local_cluster& cluster, std::vector<std::string>& violations);

/// The invariants, from the record and the database; prints the summary. Answers the violations.
std::vector<std::string> check_and_report(gesso::testing::local_cluster& cluster,
                                          const account_keys& accounts, const ledger& record,
                                          const fault_count& faults, double load_seconds,
                                          double drain_seconds, std::vector<std::string> violations);

/// The non-empty lines of `text`.
std::vector<std::string> lines_of(const std::string& text);

}  // namespace gesso::chaos
