#pragma once
// What gesso-chaos's parts share: its options, the clients' record of every create, and the cluster.

#include "tests/support/local_cluster.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace gesso::chaos {

struct options {
  int duration_s = 60;
  int clients = 8;
  int accounts = 16;
  double kill_every_s = 3.0;
  double rate = 30.0;  ///< creates a second, over all clients: a steady load below capacity
  unsigned seed = 0;
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
  std::string error;  ///< the chaos itself failed
};

/// Until the run's end: a kill -9 of a random server or worker every few seconds, restarted after a
/// moment; PostgreSQL restarted fast at a third of the run and immediately at two thirds.
fault_count inject_faults(const options& opt, gesso::testing::local_cluster& cluster);

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
