-- A route's max_concurrency holds across every worker (docs/engines.md#routes): a task holds one slot,
-- on the route it was submitted to, from its submission until it ends, is retried or is given back.
-- Slots are taken under a per-route advisory lock and counted here; the statements that end a lease
-- delete the slot in the same statement.
CREATE TABLE route_slots (
    task_id     text PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    route_key   text NOT NULL,
    acquired_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX route_slots_by_route ON route_slots (route_key);
