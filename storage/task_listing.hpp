#pragma once
// One page of an account's tasks, newest first (docs/api.md#listing).

#include "core/error.hpp"
#include "core/task_listing.hpp"
#include "storage/connection_pool.hpp"

#include <optional>
#include <string_view>
#include <vector>

namespace gesso::storage {

struct task_page {
  std::vector<task_record> tasks;
  std::optional<task_cursor> next;  ///< set when more tasks match after this page
};

/// The key's account's tasks that match `filter`, newest first, at most filter.limit of them.
/// errc::unauthorized for a bad key. One indexed range scan (tasks_account_listing, sql/008).
outcome<task_page> list_tasks(connection_pool& pool, std::string_view key_hash, const task_filter& filter);

}  // namespace gesso::storage
