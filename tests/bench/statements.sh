# The server's own statements as pgbench scripts, for same-run ceilings (tests/bench, deploy/loadtest).

# create_script FILE ACCOUNTS MODEL PRICE [TYPE RATIO]: a pgbench script running the server's create
# statement (storage/tasks.cpp: key lookup, guarded debit, task insert, ledger charge) for a random
# account; TYPE (image) and RATIO (1:1) as the task's.
create_script() {
  cat >"$1" <<SQL
\\set a random(1, $2)
WITH key AS (SELECT account_id FROM api_keys WHERE account_id = :a AND revoked_at IS NULL),
debit AS (UPDATE accounts a SET balance = a.balance - $4 FROM key WHERE a.id = key.account_id AND a.balance >= $4 RETURNING a.id),
task AS (INSERT INTO tasks (id, account_id, request_id, model_id, task_type, prompt, aspect_ratio, image_urls, credits, engine, max_attempts, deadline_at)
         SELECT 'task_' || md5(random()::text), debit.id, 'req_bench', '$3', '${5:-image}', 'benchmark', '${6:-1:1}', '[]'::jsonb, $4, 'builtin', 3, now() + interval '300 seconds'
         FROM debit RETURNING id, account_id, created_at),
charge AS (INSERT INTO ledger (account_id, task_id, kind, amount) SELECT account_id, id, 'charge', $4 FROM task)
SELECT (SELECT account_id FROM key), (SELECT floor(extract(epoch FROM created_at))::bigint FROM task);
SQL
}
