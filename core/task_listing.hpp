#pragma once
// GET /api/v1/tasks (docs/api.md#listing): the filters of a listing and its opaque cursor.

#include "core/task.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gesso {

/// Where a page ended: the last task's creation time (microseconds since the epoch) and id, the
/// listing's order (newest first, id breaking ties).
struct task_cursor {
  std::int64_t created_us = 0;
  std::string id;
};

/// What a listing asks for; every filter is optional.
struct task_filter {
  std::optional<task_status> status;
  std::optional<std::string> model_id;
  std::optional<std::int64_t> created_after;   ///< Unix seconds: created_at >= this
  std::optional<std::int64_t> created_before;  ///< Unix seconds: created_at < this
  int limit = 20;                              ///< 1–100
  std::optional<task_cursor> after;            ///< tasks older than this one
};

/// The opaque cursor of a page's last task (URL-safe, no padding).
std::string encode_cursor(const task_cursor& cursor);

/// A cursor this API issued, or nullopt for anything else.
std::optional<task_cursor> decode_cursor(std::string_view text);

}  // namespace gesso
