#include "server/load/end_check.hpp"

#include "core/ids.hpp"
#include "storage/accounts.hpp"
#include "storage/connection_pool.hpp"

#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace gesso::load {
namespace {

constexpr std::int64_t account_credits = 1'000'000'000'000;

void check_ledger(const options& o, const std::vector<created_task>& tasks, const run_accounts& accounts,
                  end_check& c) {
  storage::connection_pool pool(storage::pool_settings{o.database_url, 2});
  std::vector<std::string> ids;
  std::map<std::string, const created_task*> by_id;
  for (const created_task& t : tasks) {
    ids.push_back(t.id);
    by_id[t.id] = &t;
  }
  const std::vector<storage::task_books> books = storage::books_of_tasks(pool, ids);
  c.ledger_checked = true;
  std::size_t problems = 0;
  auto violation = [&c, &problems](std::string what) {
    if (++problems <= 20) {
      c.violations.push_back(std::move(what));
    }
  };
  if (books.size() != ids.size()) {
    violation(std::to_string(ids.size() - books.size()) + " created tasks are missing from the database");
  }
  for (const storage::task_books& b : books) {
    const created_task& t = *by_id.at(b.task_id);
    c.ledger_charged += b.charged;
    c.ledger_refunded += b.refunded;
    if (b.charges != 1 || b.charged != t.credits) {
      violation(b.task_id + ": " + std::to_string(b.charges) + " charges of " + std::to_string(b.charged) +
                " credits in all; the create answer said " + std::to_string(t.credits));
    }
    const bool should_refund = b.status == 4;
    if (b.refunds != (should_refund ? 1 : 0) || b.refunded != (should_refund ? t.credits : 0)) {
      violation(b.task_id + " (status " + std::to_string(b.status) + "): " + std::to_string(b.refunds) +
                " refunds of " + std::to_string(b.refunded) + " credits in all");
    }
    if ((t.status == 3 || t.status == 4) && b.status != t.status) {
      violation(b.task_id + ": the API said status " + std::to_string(t.status) + ", the database says " +
                std::to_string(b.status));
    }
  }
  if (!accounts.account_ids.empty()) {
    // The accounts are the run's own: their whole ledger is what the run paid.
    std::int64_t charged = 0;
    std::int64_t refunded = 0;
    for (const std::int64_t id : accounts.account_ids) {
      const storage::account_summary a = storage::show_account(pool, id).value();
      charged += a.charged;
      refunded += a.refunded;
      if (a.balance != a.ledger_balance()) {
        violation("account " + std::to_string(id) + ": balance " + std::to_string(a.balance) +
                  " differs from its ledger " + std::to_string(a.ledger_balance()));
      }
    }
    const std::int64_t paid = c.credits_charged - c.credits_refunded;
    if (charged - refunded != paid && c.unanswered == 0) {
      violation("the run's accounts paid " + std::to_string(charged - refunded) +
                " credits; the answers say " + std::to_string(paid));
    }
  }
  if (problems > 20) {
    c.violations.push_back("… and " + std::to_string(problems - 20) + " more");
  }
}

}  // namespace

run_accounts accounts_for(const options& o) {
  run_accounts out;
  if (!o.keys_file.empty()) {
    std::ifstream in(o.keys_file);
    if (!in) {
      throw std::runtime_error("cannot read --keys " + o.keys_file);
    }
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) {
        out.keys.push_back(line);
      }
    }
    if (out.keys.empty()) {
      throw std::runtime_error("--keys " + o.keys_file + " holds no keys");
    }
    return out;
  }
  storage::connection_pool pool(storage::pool_settings{o.database_url, 2});
  for (int i = 0; i < o.accounts; ++i) {
    const std::string key = new_api_key();
    const storage::account_summary a = storage::create_account(
        pool, "gesso-load", account_credits, hash_api_key(key), api_key_display_prefix(key));
    out.keys.push_back(key);
    out.account_ids.push_back(a.id);
  }
  return out;
}

end_check check_end(const options& o, const std::vector<created_task>& tasks, std::uint64_t unanswered,
                    std::uint64_t generator_errors, const run_accounts& accounts) {
  end_check c;
  c.unanswered = unanswered;
  for (const created_task& t : tasks) {
    ++c.created;
    c.credits_charged += t.credits;
    if (t.status == 3) {
      ++c.succeeded;
    } else if (t.status == 4) {
      ++c.failed;
      c.credits_refunded += t.credits;
    } else {
      ++c.not_final;
    }
  }
  c.finality_checked = o.settle_s > 0;
  if (c.not_final > 0 && c.finality_checked) {
    std::ostringstream what;
    what << c.not_final << " tasks were not final " << o.settle_s << " s after the arrivals ended";
    c.violations.push_back(what.str());
  }
  if (generator_errors > 0) {
    c.violations.push_back(std::to_string(generator_errors) + " of the generator's own steps failed");
  }
  if (!o.database_url.empty()) {
    check_ledger(o, tasks, accounts, c);
  }
  return c;
}

}  // namespace gesso::load
