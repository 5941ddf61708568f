-- GET /api/v1/tasks (docs/api.md#listing) walks one account's tasks newest first, the id breaking ties
-- of the same microsecond: this index serves that order and the cursor's row comparison, so a page costs
-- the same however many tasks other accounts hold. It replaces the (account_id, created_at) index of
-- sql/001, which it covers.
CREATE INDEX tasks_account_listing ON tasks (account_id, created_at, id);
DROP INDEX tasks_account_created;
