#pragma once
// The webhook outbox (sql/012): deliveries claimed by workers like tasks, their content, their end; and
// the accounts' signing secrets.

#include "core/error.hpp"
#include "core/task.hpp"
#include "storage/connection_pool.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gesso::storage {

/// A delivery held by one worker until `lease` passes (then it is due again, with the same id).
struct webhook_delivery {
  std::string id;  ///< webhook-id
  std::string task_id;
  std::string url;
  int attempt = 0;              ///< 1 for the first; guards the end (a delivery taken over ends only once)
  std::chrono::seconds age{0};  ///< since the task was final
};

/// Claims up to `limit` due deliveries.
std::vector<webhook_delivery> claim_deliveries(connection_pool& pool, int limit,
                                               std::chrono::milliseconds lease);

/// What a delivery sends: the task, and the account's secrets not yet expired (newest first).
struct webhook_content {
  task_record task;
  std::vector<std::string> secrets;
};
std::optional<webhook_content> delivery_content(connection_pool& pool, std::string_view task_id);

/// How an attempt ended: delivered (a 2xx), or not, with when to try again (nullopt: give up).
struct delivery_end {
  bool delivered = false;
  std::optional<int> status_code = std::nullopt;  ///< the receiver's answer, when there was one
  std::string error = {};                         ///< why it was not delivered
  std::optional<std::chrono::milliseconds> retry_in = std::nullopt;
};

/// Applies the end of attempt `attempt` of delivery `id`; false when the delivery is no longer this
/// attempt's (its lease ran out and another worker took it).
bool end_delivery(connection_pool& pool, std::string_view id, int attempt, const delivery_end& end);

/// A new current secret for the account; the previous one stays valid for 24 hours. errc::not_found
/// when there is no such account.
outcome<std::string> rotate_webhook_secret(connection_pool& pool, std::int64_t account_id,
                                           std::string_view new_secret);

}  // namespace gesso::storage
