#pragma once
// storage-internal: SQL fragments that more than one file's statements must agree on: the refund of
// failed tasks, and the announcement of tasks made final.

namespace gesso::storage::detail {

// The refund of every task in a CTE named `failed` (id, account_id, credits). The refund row is the
// once-only guard: UNIQUE (task_id, kind) makes a second insert a no-op, and the balance moves only by
// the rows actually inserted.
inline constexpr const char* refund_cte = R"sql(
refund AS (
    INSERT INTO ledger (account_id, task_id, kind, amount)
    SELECT account_id, id, 'refund', credits FROM failed
    ON CONFLICT (task_id, kind) DO NOTHING
    RETURNING account_id, amount
), credit AS (
    -- Summed per account first: an UPDATE joined to several rows for one target row applies only one.
    UPDATE accounts a SET balance = a.balance + r.total
    FROM (SELECT account_id, sum(amount) AS total FROM refund GROUP BY account_id) r
    WHERE a.id = r.account_id
)
)sql";

// Announces the ids in the CTE `finals` (id) on the gesso_tasks_final channel (storage/notifications.hpp),
// 200 a notification (a payload holds at most 8000 bytes). A SELECT in a WITH runs only when the query
// reads it: the statement's last SELECT joins `announced` (one row).
inline constexpr const char* announce_cte = R"sql(
announced AS (
    SELECT count(pg_notify('gesso_tasks_final', ids)) AS notifications
    FROM (SELECT string_agg(id, ',') AS ids
          FROM (SELECT id, (row_number() OVER ()) / 200 AS chunk FROM finals) numbered
          GROUP BY chunk) chunks
)
)sql";

// The webhook outbox row of every task in `finals` that was created with a callback_url (sql/012),
// written in the statement that makes it final. ON CONFLICT: a task is final once, but a statement that
// lost a race writes nothing twice.
inline constexpr const char* outbox_cte = R"sql(
outbox AS (
    INSERT INTO webhook_deliveries (id, task_id, account_id, url)
    SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), t.id, t.account_id, t.callback_url
    FROM tasks t JOIN finals f ON f.id = t.id
    WHERE t.callback_url IS NOT NULL
    ON CONFLICT (task_id) DO NOTHING
)
)sql";

}  // namespace gesso::storage::detail
