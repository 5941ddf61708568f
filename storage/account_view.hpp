#pragma once
// What an account's own key may read about it (docs/api.md#account): its balance and limits, and its
// usage computed from the ledger.

#include "core/error.hpp"
#include "core/limits.hpp"
#include "storage/connection_pool.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gesso::storage {

struct account_view {
  std::int64_t id = 0;
  std::string name;
  std::int64_t balance = 0;
  limit_settings limits;  ///< as set on the account (core/limits.hpp)
};

/// The key's account; errc::unauthorized for a bad key.
outcome<account_view> view_account(connection_pool& pool, std::string_view key_hash);

/// A change of one limit: `change` false keeps it; otherwise `value` sets it, nullopt returning it to the
/// configuration's default.
struct limit_change {
  bool change = false;
  std::optional<int> value = std::nullopt;
};

/// Sets an account's limits (operators: `gesso account limits`) and returns them as stored;
/// errc::not_found when there is no such account.
outcome<limit_settings> set_account_limits(connection_pool& pool, std::int64_t account_id, limit_change rate,
                                           limit_change burst, limit_change max_concurrent);

enum class usage_grouping { model, day };

/// One group of a usage report: charges and refunds whose ledger rows fall in the window.
struct usage_group {
  std::string key;            ///< the model id, or the UTC day as YYYY-MM-DD
  std::int64_t tasks = 0;     ///< charges: tasks created
  std::int64_t charged = 0;   ///< credits charged
  std::int64_t refunds = 0;   ///< refunds: tasks that failed
  std::int64_t refunded = 0;  ///< credits refunded
};

/// The key's account's usage in [from, to) (Unix seconds), grouped; errc::unauthorized for a bad key.
outcome<std::vector<usage_group>> account_usage(connection_pool& pool, std::string_view key_hash,
                                                std::int64_t from, std::int64_t to, usage_grouping grouping);

}  // namespace gesso::storage
