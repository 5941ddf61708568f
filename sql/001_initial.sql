-- Gesso schema, version 1: accounts and their credit balance, hashed API keys, tasks, and the
-- append-only credit ledger. Invariant: accounts.balance = grants - charges + refunds (docs/architecture.md).

CREATE TABLE accounts (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name        text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    balance     bigint      NOT NULL DEFAULT 0 CHECK (balance >= 0),
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- Only the SHA-256 of a key is stored, with a short prefix that identifies it in listings.
CREATE TABLE api_keys (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id      bigint      NOT NULL REFERENCES accounts (id),
    key_hash        text        NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
    display_prefix  text        NOT NULL CHECK (length(display_prefix) <= 16),
    created_at      timestamptz NOT NULL DEFAULT now(),
    revoked_at      timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id);

CREATE TABLE tasks (
    id                text        PRIMARY KEY,
    account_id        bigint      NOT NULL REFERENCES accounts (id),
    request_id        text        NOT NULL,
    model_id          text        NOT NULL,
    task_type         text        NOT NULL CHECK (task_type IN ('image', 'video')),
    status            smallint    NOT NULL DEFAULT 1 CHECK (status BETWEEN 1 AND 4),
    prompt            text        NOT NULL,
    aspect_ratio      text        NOT NULL,
    image_urls        jsonb       NOT NULL DEFAULT '[]',
    credits           bigint      NOT NULL CHECK (credits >= 0),
    engine            text        NOT NULL,
    -- Outputs are media-store object keys; URLs are signed when a response is rendered.
    image_object      text,
    video_object      text,
    audio_object      text,
    error             text,
    -- Worker bookkeeping: claims, leases, retries, remote provider jobs.
    attempts          integer     NOT NULL DEFAULT 0,
    max_attempts      integer     NOT NULL CHECK (max_attempts >= 1),
    lease_owner       text,
    lease_token       uuid,
    lease_expires_at  timestamptz,
    run_after         timestamptz NOT NULL DEFAULT now(),
    deadline_at       timestamptz NOT NULL,
    provider_job      text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    started_at        timestamptz,
    finished_at       timestamptz,
    CHECK ((status IN (3, 4)) = (finished_at IS NOT NULL))
);
-- Due work for workers: queued or running (expired leases), ordered by when it may run.
CREATE INDEX tasks_due ON tasks (run_after) WHERE status IN (1, 2);
CREATE INDEX tasks_account_created ON tasks (account_id, created_at);

-- Append-only: one charge per task, at most one refund per task, grants without a task.
CREATE TABLE ledger (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id  bigint      NOT NULL REFERENCES accounts (id),
    task_id     text        REFERENCES tasks (id),
    kind        text        NOT NULL CHECK (kind IN ('grant', 'charge', 'refund')),
    amount      bigint      NOT NULL CHECK (amount >= 0),
    note        text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (task_id, kind),
    CHECK ((kind = 'grant') = (task_id IS NULL)),
    CHECK (kind <> 'grant' OR amount > 0)
);
CREATE INDEX ledger_account ON ledger (account_id);

CREATE FUNCTION ledger_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the ledger is append-only: % is not allowed', TG_OP;
END
$$;
CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE ON ledger
    FOR EACH ROW EXECUTE FUNCTION ledger_is_append_only();
