#include "tests/chaos/chaos.hpp"

#include <chrono>
#include <iostream>
#include <set>
#include <thread>

namespace gesso::chaos {
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

double drain(gesso::testing::local_cluster& cluster, std::vector<std::string>& violations) {
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
  return drain_seconds;
}

namespace {

long count(gesso::testing::local_cluster& cluster, const std::string& sql) {
  return std::stol(lines_of(cluster.psql(sql)).at(0));
}

// What the creates came to, checked against the database.
struct create_tally {
  int accepted = 0;
  int unknown = 0;             ///< no answer or a 5xx
  int unanswered_created = 0;  ///< of those, how many made a task anyway
  std::size_t tasks = 0;       ///< in the database
};

// Every accepted task exists, is final and is its account's; no 4xx; no account has more tasks than its
// accepted creates plus its unanswered ones (which may or may not have made a task: either is fine).
create_tally check_creates(gesso::testing::local_cluster& cluster, const account_keys& accounts,
                           const ledger& record, std::vector<std::string>& violations) {
  std::map<std::string, std::string> status_of;  // every task in the database
  std::map<std::string, std::int64_t> account_of;
  for (const auto& line : lines_of(cluster.psql("SELECT id, status, account_id FROM tasks"))) {
    const auto a = line.find('|');
    const auto b = line.find('|', a + 1);
    status_of[line.substr(0, a)] = line.substr(a + 1, b - a - 1);
    account_of[line.substr(0, a)] = std::stoll(line.substr(b + 1));
  }
  int refused = 0;
  create_tally tally;
  std::map<int, int> accepted_by_account;
  std::map<int, int> unknown_by_account;
  for (const auto& r : record.creates) {
    if (r.outcome == create_record::kind::accepted) {
      ++tally.accepted;
      ++accepted_by_account[r.account];
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
      ++tally.unknown;
      ++unknown_by_account[r.account];
    }
  }
  if (refused > 0) {
    violations.push_back(std::to_string(refused) + " creates refused with a 4xx (none expected)");
  }
  for (std::size_t i = 0; i < accounts.size(); ++i) {
    const long in_db =
        count(cluster, "SELECT count(*) FROM tasks WHERE account_id = " + std::to_string(accounts[i].first));
    const int ok = accepted_by_account[static_cast<int>(i)];
    const int maybe = unknown_by_account[static_cast<int>(i)];
    if (in_db < ok || in_db > ok + maybe) {
      violations.push_back("account " + std::to_string(accounts[i].first) + " has " + std::to_string(in_db) +
                           " tasks for " + std::to_string(ok) + " accepted and " + std::to_string(maybe) +
                           " unanswered creates");
    }
    tally.unanswered_created += static_cast<int>(in_db) - ok;
  }
  tally.tasks = status_of.size();
  return tally;
}

// Charged once, refunded once when failed and never otherwise, balances that add up.
void check_ledger(gesso::testing::local_cluster& cluster, std::vector<std::string>& violations) {
  auto expect_zero = [&](const std::string& what, const std::string& sql) {
    const long n = count(cluster, sql);
    if (n != 0) {
      violations.push_back(std::to_string(n) + " " + what);
    }
  };
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
}

void print_summary(gesso::testing::local_cluster& cluster, const ledger& record, const fault_count& faults,
                   const create_tally& tally, double load_seconds, double drain_seconds,
                   const std::vector<std::string>& violations) {
  const long succeeded = count(cluster, "SELECT count(*) FROM tasks WHERE status = 3");
  const long failed = count(cluster, "SELECT count(*) FROM tasks WHERE status = 4");
  const long remote = count(cluster, "SELECT count(*) FROM tasks WHERE model_id = 'chaos-remote'");
  std::cout << "\n== gesso-chaos summary ==\n"
            << "load: " << load_seconds << " s, " << record.creates.size() << " creates ("
            << static_cast<double>(record.creates.size()) / load_seconds << "/s), " << record.polls
            << " polls (" << record.poll_errors << " without an answer or not 200)\n"
            << "create answers:";
  for (const auto& [outcome, n] : record.by_outcome) {
    std::cout << " " << outcome << "×" << n;
  }
  std::cout << "\n"
            << "accepted: " << tally.accepted << "; unanswered or 5xx: " << tally.unknown << ", of which "
            << tally.unanswered_created << " made a task anyway (all final, charged once)\n"
            << "tasks: " << tally.tasks << " in the database (" << remote
            << " through the task-api engine, plus their upstream tasks): " << succeeded << " succeeded, "
            << failed << " failed and refunded\n"
            << "faults: " << faults.server_kills << " server kill -9, " << faults.worker_kills
            << " worker kill -9, PostgreSQL restarts:";
  for (const auto& m : faults.pg_restarts) {
    std::cout << " " << m;
  }
  if (faults.with_provider) {
    std::cout << "\nprovider faults: " << faults.provider_restarts
              << " kill -9 and restart of gesso-fake-providers, " << faults.storms << " 429 storms ("
              << faults.storm_refusals << " creates refused with 429)";
    for (const auto& line : lines_of(cluster.psql(
             "SELECT model_id || ': ' || count(*) FILTER (WHERE status = 3) || ' succeeded, ' || "
             "count(*) FILTER (WHERE status = 4) || ' failed' FROM tasks WHERE model_id LIKE 'chaos-%' AND "
             "model_id NOT IN ('chaos-image', 'chaos-video', 'chaos-fail', 'chaos-remote') GROUP BY model_id "
             "ORDER BY model_id"))) {
      std::cout << "\n  " << line;
    }
  }
  std::cout << "\nfailures by reason:";
  for (const auto& line : lines_of(
           cluster.psql("SELECT count(*) || '× ' || coalesce(error_kind, '-') || ': ' || left(error, 70) "
                        "FROM tasks WHERE status = 4 GROUP BY error_kind, error ORDER BY count(*) DESC "
                        "LIMIT 8"))) {
    std::cout << "\n  " << line;
  }
  std::cout << "\ndrain: " << drain_seconds << " s until every task was final\n"
            << "violations: " << violations.size() << "\n";
  for (const auto& v : violations) {
    std::cout << "  VIOLATION: " << v << "\n";
  }
}

}  // namespace

std::vector<std::string> check_and_report(gesso::testing::local_cluster& cluster,
                                          const account_keys& accounts, const ledger& record,
                                          const fault_count& faults, double load_seconds,
                                          double drain_seconds, std::vector<std::string> violations) {
  const create_tally tally = check_creates(cluster, accounts, record, violations);
  check_ledger(cluster, violations);
  if (faults.server_kills == 0 || faults.worker_kills == 0 || faults.pg_restarts.size() < 2 ||
      (faults.with_provider && (faults.provider_restarts == 0 || faults.storms == 0))) {
    violations.push_back("the chaos did not happen as planned (run longer than a few kill intervals)");
  }
  print_summary(cluster, record, faults, tally, load_seconds, drain_seconds, violations);
  return violations;
}

}  // namespace gesso::chaos
