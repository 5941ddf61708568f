-- Idempotency-Key on create (docs/api.md#idempotency): a key is scoped to its account and kept 24 hours.
-- The row is inserted by the create statement itself, together with the debit, the task and the charge:
-- a retry either finds it (and replays the task) or the create never happened. request_hash is the
-- SHA-256 of the validated request, so a reused key with a different request is refused.
CREATE TABLE idempotency_keys (
    account_id    bigint      NOT NULL REFERENCES accounts (id),
    key           text        NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    request_hash  text        NOT NULL CHECK (request_hash ~ '^[0-9a-f]{64}$'),
    task_id       text        NOT NULL REFERENCES tasks (id),
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, key)
);
-- For the worker's upkeep, which deletes keys past their 24 hours in small batches.
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
