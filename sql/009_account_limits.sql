-- Per-account limits (docs/api.md#limits), set by `gesso account limits`; NULL takes the configuration's
-- default (GESSO_RATE_LIMIT_RPS, GESSO_RATE_LIMIT_BURST, GESSO_MAX_CONCURRENT_TASKS), 0 is unlimited.
ALTER TABLE accounts
    ADD COLUMN rate_limit_per_second integer CHECK (rate_limit_per_second >= 0),
    ADD COLUMN rate_limit_burst      integer CHECK (rate_limit_burst >= 0),
    ADD COLUMN max_concurrent_tasks  integer CHECK (max_concurrent_tasks >= 0);

-- GET /api/v1/account/usage reads one account's ledger rows in a time window.
CREATE INDEX ledger_account_created ON ledger (account_id, created_at);
DROP INDEX ledger_account;
