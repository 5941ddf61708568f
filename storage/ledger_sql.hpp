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

}  // namespace gesso::storage::detail
