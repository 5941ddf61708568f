# The server's own statements as pgbench scripts, for same-run ceilings (tests/bench, deploy/loadtest).

# create_script FILE ACCOUNTS MODEL PRICE [TYPE RATIO]: a pgbench script running the server's create
# statement (storage/tasks.cpp: key lookup, idempotency turn, guarded debit, task insert, ledger charge) for a random
# account; TYPE (image) and RATIO (1:1) as the task's.
create_script() {
  cat >"$1" <<SQL
\\set a random(1, $2)
WITH key AS (SELECT account_id FROM api_keys WHERE account_id = :a AND revoked_at IS NULL),
turn AS (SELECT account_id, CASE WHEN NULL::text IS NULL THEN true ELSE pg_try_advisory_xact_lock(0) END AS ours FROM key),
fresh AS (SELECT account_id FROM turn WHERE ours AND (NULL::text IS NULL OR NOT EXISTS (SELECT 1 FROM idempotency_keys i WHERE i.account_id = turn.account_id AND i.key = NULL::text))),
debit AS (UPDATE accounts a SET balance = a.balance - $4 FROM fresh WHERE a.id = fresh.account_id AND a.balance >= $4 RETURNING a.id),
task AS (INSERT INTO tasks (id, account_id, request_id, model_id, task_type, prompt, aspect_ratio, image_urls, credits, engine, max_attempts, deadline_at, callback_url)
         SELECT 'task_' || md5(random()::text), debit.id, 'req_bench', '$3', '${5:-image}', 'benchmark', '${6:-1:1}', '[]'::jsonb, $4, 'builtin', 3, now() + interval '300 seconds', NULL::text
         FROM debit RETURNING id, account_id, created_at),
charge AS (INSERT INTO ledger (account_id, task_id, kind, amount) SELECT account_id, id, 'charge', $4 FROM task),
remembered AS (INSERT INTO idempotency_keys (account_id, key, request_hash, task_id) SELECT account_id, NULL::text, NULL::text, id FROM task WHERE NULL::text IS NOT NULL)
SELECT (SELECT account_id FROM key), (SELECT floor(extract(epoch FROM created_at))::bigint FROM task), (SELECT ours FROM turn), (SELECT count(*) FROM fresh);
SQL
}
