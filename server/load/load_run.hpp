#pragma once
// Runs a gesso-load profile: the arrivals (open or closed loop), the scenario's requests, the settle
// phase and the end check against the ledger.

#include "server/load/load_options.hpp"
#include "server/load/load_report.hpp"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace gesso::load {

/// The API keys a run uses, and the accounts behind them when the generator made them.
struct run_accounts {
  std::vector<std::string> keys;
  std::vector<std::int64_t> account_ids;  ///< empty for --keys
};

/// Reads --keys, or creates --accounts accounts in the database. Throws with a reason on failure.
run_accounts accounts_for(const options& o);

/// Runs the load and the end check; progress lines (unless --quiet) go to `progress`.
report run_load(const options& o, const run_accounts& accounts, std::ostream& progress);

}  // namespace gesso::load
