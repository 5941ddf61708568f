#pragma once
// Runs a gesso-load profile: the arrivals (open or closed loop), the scenario's requests, the settle
// phase and the end check against the ledger.

#include "server/load/end_check.hpp"
#include "server/load/load_options.hpp"
#include "server/load/load_report.hpp"

#include <ostream>

namespace gesso::load {

/// Runs the load and the end check; progress lines (unless --quiet) go to `progress`.
report run_load(const options& o, const run_accounts& accounts, std::ostream& progress);

}  // namespace gesso::load
