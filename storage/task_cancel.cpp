#include "storage/task_cancel.hpp"

#include "storage/ledger_sql.hpp"
#include "storage/pool_internal.hpp"
#include "storage/task_rows.hpp"

namespace gesso::storage {
namespace {

// The task's row, locked for the rest of the transaction: claims, lease ends and the rescuer wait.
const detail::statement lock_statement{"cancel_lock", R"sql(
SELECT t.status
FROM api_keys k JOIN tasks t ON t.account_id = k.account_id AND t.id = $2
WHERE k.key_hash = $1 AND k.revoked_at IS NULL
FOR UPDATE OF t
)sql"};

// A queued task: failed as canceled, its inline inputs dropped (sql/002), refunded once.
const detail::statement cancel_queued_statement{"cancel_queued",
                                                std::string(R"sql(
WITH failed AS (
    UPDATE tasks t
    SET status = 4, finished_at = now(), error = 'canceled at the client''s request', error_kind = 'canceled',
        cancel_requested_at = now(), image_urls = without_inline_inputs(t.image_urls),
        lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
    WHERE t.id = $1 AND t.status = 1
    RETURNING t.id, t.account_id, t.credits
), freed AS (
    DELETE FROM route_slots WHERE task_id IN (SELECT id FROM failed)
),)sql") + detail::refund_cte + ", finals AS (SELECT id FROM failed), " +
                                                    detail::announce_cte + "," + detail::outbox_cte +
                                                    "SELECT count(*) FROM failed, announced"};

// A running task: marked; due at once when no worker holds it (waiting at its provider, or between
// attempts), so that a worker claims and cancels it without waiting for its next poll.
const detail::statement request_cancel_statement{"request_cancel", R"sql(
UPDATE tasks
SET cancel_requested_at = coalesce(cancel_requested_at, now()),
    run_after = CASE WHEN lease_token IS NULL THEN least(run_after, now()) ELSE run_after END
WHERE id = $1 AND status = 2
)sql"};

}  // namespace

outcome<cancel_effect> cancel_task(connection_pool& pool, std::string_view key_hash,
                                   std::string_view task_id) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<cancel_effect> {
    pqxx::work tx(c);
    const pqxx::result row =
        tx.exec_prepared(lock_statement.name, std::string(key_hash), std::string(task_id));
    if (row.empty()) {
      if (auto account = detail::account_of_key(tx, key_hash); !account) {
        return account.error();
      }
      return fail(errc::not_found, "task not found");
    }
    const int status = row[0][0].as<int>();
    if (status == 3 || status == 4) {
      return fail(errc::conflict, std::string("the task is already final (task_status ") +
                                      std::to_string(status) +
                                      "); only a queued or running task can be canceled");
    }
    const bool queued = status == 1;
    tx.exec_prepared(queued ? cancel_queued_statement.name : request_cancel_statement.name,
                     std::string(task_id));
    tx.commit();
    return queued ? cancel_effect::canceled : cancel_effect::requested;
  });
}

}  // namespace gesso::storage
