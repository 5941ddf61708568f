#pragma once
// Accounts, their API keys and credit grants: the operator side of the ledger.

#include "core/error.hpp"
#include "storage/connection_pool.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gesso::storage {

/// An API key as operators see it: never the key itself.
struct key_info {
  std::int64_t id = 0;
  std::int64_t account_id = 0;
  std::string display_prefix;
  std::string created_at;                 ///< ISO 8601
  std::optional<std::string> revoked_at;  ///< ISO 8601, when revoked
};

/// An account's balance beside the balance its ledger implies, with its keys and task counts.
struct account_summary {
  std::int64_t id = 0;
  std::string name;
  std::int64_t balance = 0;
  std::int64_t granted = 0;
  std::int64_t charged = 0;
  std::int64_t refunded = 0;
  std::array<std::int64_t, 4> tasks_by_status{};  ///< index = task_status - 1
  std::vector<key_info> keys;
  std::optional<std::string> webhook_secret;  ///< only when the account was just created: shown once

  /// grants − charges + refunds: must always equal balance.
  std::int64_t ledger_balance() const { return granted - charged + refunded; }
};

/// Creates an account holding `credits` (recorded as a ledger grant), its first key and its webhook
/// signing secret, in one transaction.
account_summary create_account(connection_pool& pool, std::string_view name, std::int64_t credits,
                               std::string_view key_hash, std::string_view key_prefix);

/// Adds a key to an account; errc::not_found when the account does not exist.
outcome<key_info> create_key(connection_pool& pool, std::int64_t account_id, std::string_view key_hash,
                             std::string_view key_prefix);

/// Revokes a key by id; errc::not_found when there is no such key. Revoking twice keeps the first time.
outcome<key_info> revoke_key(connection_pool& pool, std::int64_t key_id);

/// Revokes the key with this hash; errc::not_found when there is none.
outcome<key_info> revoke_key_by_hash(connection_pool& pool, std::string_view key_hash);

/// Adds `amount` credits with a ledger grant row, in one transaction; returns the new summary.
outcome<account_summary> grant_credits(connection_pool& pool, std::int64_t account_id, std::int64_t amount,
                                       std::string_view note);

/// The account's summary; errc::not_found when it does not exist.
outcome<account_summary> show_account(connection_pool& pool, std::int64_t account_id);

/// Every account whose balance differs from its ledger (empty when the books balance).
std::vector<account_summary> ledger_mismatches(connection_pool& pool);

/// One task as the books record it: its status and the charge and refund rows that name it.
struct task_books {
  std::string task_id;
  int status = 0;
  std::int64_t credits = 0;
  int charges = 0;
  std::int64_t charged = 0;
  int refunds = 0;
  std::int64_t refunded = 0;
};

/// The books of each of `task_ids` that exists (the load generator's end check), in no set order.
std::vector<task_books> books_of_tasks(connection_pool& pool, const std::vector<std::string>& task_ids);

}  // namespace gesso::storage
