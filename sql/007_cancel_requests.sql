-- POST /api/v1/tasks/{id}/cancel on a running task (docs/api.md#cancel) asks the worker to stop it: the
-- request is kept here, the task is made due at once when no worker holds it, and the worker that claims
-- it next cancels it at its provider and fails it as canceled (refunded once, as every failure).
ALTER TABLE tasks ADD COLUMN cancel_requested_at timestamptz;
