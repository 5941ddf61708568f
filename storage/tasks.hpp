#pragma once
// Tasks in PostgreSQL: the create transaction (authenticate, debit, insert, charge) and queries.

#include "core/create_request.hpp"
#include "core/error.hpp"
#include "core/task.hpp"
#include "storage/connection_pool.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gesso::storage {

/// What a successful create returns to the client.
struct created_task {
  std::string id;
  std::int64_t credits = 0;
  std::int64_t created_at = 0;  ///< Unix seconds
};

/// Authenticates the key and, in ONE transaction, debits the model's price (guarded by
/// balance >= price), inserts the task with status 1 and appends the ledger charge.
/// Fails with errc::unauthorized or errc::insufficient_credits, having written nothing.
outcome<created_task> create_task(connection_pool& pool, std::string_view key_hash,
                                  const create_request& request, std::string_view task_id,
                                  std::string_view request_id);

/// The task if it belongs to the key's account. errc::unauthorized for a bad key; errc::not_found
/// both for an unknown id and for another account's task.
outcome<task_record> find_task(connection_pool& pool, std::string_view key_hash, std::string_view task_id);

/// The account id of an active key, or errc::unauthorized.
outcome<std::int64_t> authenticate(connection_pool& pool, std::string_view key_hash);

/// Every column of a task as a JSON object, for operators (`gesso task show`); nullopt if none.
std::optional<std::string> task_details_json(connection_pool& pool, std::string_view task_id);

}  // namespace gesso::storage
