-- Webhooks (docs/api.md#webhooks). A task created with a callback_url gets one delivery row in the
-- outbox, written by the statement that makes it final (lease end, rescuer, cancel). Workers claim due
-- deliveries like tasks (next_attempt_at doubles as the lease: a worker that dies mid-delivery leaves it
-- due again, and the retry carries the same id), POST the task's data signed the Standard Webhooks way
-- with the account's secrets, and retry with backoff for 24 hours until a 2xx.
ALTER TABLE tasks ADD COLUMN callback_url text CHECK (length(callback_url) <= 2048);

-- An account's signing secrets: the current one (expires_at NULL) and, for 24 hours after a rotation,
-- the one before it; deliveries are signed with every secret not yet expired.
CREATE TABLE webhook_secrets (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id  bigint      NOT NULL REFERENCES accounts (id),
    secret      text        NOT NULL CHECK (secret ~ '^whsec_[A-Za-z0-9+/=]{40,}$'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz
);
CREATE INDEX webhook_secrets_account ON webhook_secrets (account_id);
CREATE UNIQUE INDEX webhook_secrets_current ON webhook_secrets (account_id) WHERE expires_at IS NULL;

-- Accounts made before webhooks get a secret now; operators see it by rotating (`gesso webhook rotate`).
INSERT INTO webhook_secrets (account_id, secret)
SELECT id, 'whsec_' || encode(decode(replace(gen_random_uuid()::text, '-', '') ||
                                     replace(gen_random_uuid()::text, '-', ''), 'hex'), 'base64')
FROM accounts;

CREATE TABLE webhook_deliveries (
    id               text        PRIMARY KEY,  -- the webhook-id header: the same on every retry
    task_id          text        NOT NULL UNIQUE REFERENCES tasks (id),
    account_id       bigint      NOT NULL REFERENCES accounts (id),
    url              text        NOT NULL,
    status           text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         integer     NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    last_status_code integer,
    last_error       text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
