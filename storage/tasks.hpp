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
  std::string request_id;  ///< the request that created it (an earlier one, when replayed)
  std::int64_t credits = 0;
  std::int64_t created_at = 0;  ///< Unix seconds; 0 when replayed
  bool replayed = false;        ///< an earlier create with the same Idempotency-Key made the task
};

/// An Idempotency-Key (docs/api.md#idempotency) and the fingerprint of the request it came with.
struct idempotency {
  std::string key;           ///< 1–255 printable ASCII characters, checked by the caller
  std::string request_hash;  ///< request_fingerprint() of the validated request
};

/// Authenticates the key and, in ONE transaction, debits the model's price (guarded by
/// balance >= price), inserts the task with status 1, appends the ledger charge and, with `idem`,
/// remembers the Idempotency-Key for 24 hours. A key already used answers the task it made
/// (`replayed`), or errc::unprocessable when the request differs; a key that another create holds at
/// this moment answers errc::conflict. Fails with errc::unauthorized or errc::insufficient_credits,
/// having written nothing.
outcome<created_task> create_task(connection_pool& pool, std::string_view key_hash,
                                  const create_request& request, std::string_view task_id,
                                  std::string_view request_id, const std::optional<idempotency>& idem = {});

/// Deletes up to `limit` Idempotency-Keys past their 24 hours; returns how many.
std::int64_t purge_idempotency_keys(connection_pool& pool, int limit);

/// The task if it belongs to the key's account. errc::unauthorized for a bad key; errc::not_found
/// both for an unknown id and for another account's task.
outcome<task_record> find_task(connection_pool& pool, std::string_view key_hash, std::string_view task_id);

/// The account id of an active key, or errc::unauthorized.
outcome<std::int64_t> authenticate(connection_pool& pool, std::string_view key_hash);

/// Every column of a task as a JSON object, for operators (`gesso task show`); nullopt if none.
std::optional<std::string> task_details_json(connection_pool& pool, std::string_view task_id);

}  // namespace gesso::storage
