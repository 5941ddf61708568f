-- How far a running task has come, 0–100, as its provider last reported it (docs/api.md#failures);
-- NULL where no provider reports it. A task that waits at its provider keeps the latest value.
ALTER TABLE tasks ADD COLUMN progress smallint CHECK (progress BETWEEN 0 AND 100);
