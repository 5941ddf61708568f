#pragma once
// The generator's view of the database: the accounts a run uses and, afterwards, the end check —
// every created task final, and each one's charge and refund as the ledger records them.

#include "server/load/load_options.hpp"
#include "server/load/load_report.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gesso::load {

/// A task the generator created, as it knows it.
struct created_task {
  std::string id;
  std::size_t key = 0;
  std::int64_t credits = 0;
  int status = 1;  ///< the last status seen; 3 and 4 are final
};

/// The API keys a run uses, and the accounts behind them when the generator made them.
struct run_accounts {
  std::vector<std::string> keys;
  std::vector<std::int64_t> account_ids;  ///< empty for --keys
};

/// Reads --keys, or creates --accounts accounts in the database. Throws with a reason on failure.
run_accounts accounts_for(const options& o);

/// Counts the tasks by their last seen status and, with --database-url, compares them with the ledger.
end_check check_end(const options& o, const std::vector<created_task>& tasks, std::uint64_t unanswered,
                    std::uint64_t generator_errors, const run_accounts& accounts);

}  // namespace gesso::load
