#pragma once
// storage-internal: SQL fragments that more than one file's statements must agree on.

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

}  // namespace gesso::storage::detail
