#pragma once
// `gesso`, the operator's command line: migrations, accounts, keys, credits, task inspection, ledger check.

#include <iosfwd>
#include <span>
#include <string>

namespace gesso::admin {

/// Runs one admin command (arguments after the program name). Returns the exit status:
/// 0 done, 1 the operation failed (not found, database unavailable, ledger mismatch), 2 usage error.
int run_admin_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace gesso::admin
