#pragma once
// A client's cancel of its task (docs/api.md#cancel): a queued task fails at once as canceled and is
// refunded in the same transaction; a running task is marked, and the worker that claims it next
// cancels it at its provider. The task's row lock orders the cancel against claims, lease ends and the
// rescuer, and the ledger's UNIQUE (task_id, kind) refunds at most once whatever wins.

#include "core/error.hpp"
#include "storage/connection_pool.hpp"

#include <string_view>

namespace gesso::storage {

/// What a cancel did.
enum class cancel_effect {
  canceled,   ///< the task was queued: it failed as canceled and its credits are back
  requested,  ///< the task was running: a worker cancels it; refunded only if it ends failed
};

/// Cancels the key's account's task. errc::unauthorized for a bad key, errc::not_found for an unknown
/// id or another account's task, errc::conflict for a task that is already final.
outcome<cancel_effect> cancel_task(connection_pool& pool, std::string_view key_hash,
                                   std::string_view task_id);

}  // namespace gesso::storage
