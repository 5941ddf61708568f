-- Fair claiming under per-account concurrency caps (docs/api.md#limits, docs/architecture.md#claims).
-- A claim visits the accounts that have open tasks (from a random one, wrapping, at most p_max_accounts,
-- and no more once p_limit of them have due tasks) and takes each one's due tasks oldest first: tasks already running (retries, polls, expired leases)
-- always, new ones only while the account has room under its cap. The batch is then filled round-robin
-- by each account's oldest, so one account's thousand queued tasks cannot push another's single task
-- past this claim. A capped account is claimed under its advisory lock, tried and never waited for,
-- and its running tasks are counted after the lock with a fresh snapshot (a VOLATILE function), so two
-- workers cannot both fill the same room.
-- status is the second column: an account's due tasks of one status are one range, however many of its
-- other tasks wait (the drain benchmark found a claim scanning a 400 000-task backlog without it).
CREATE INDEX tasks_open_by_account ON tasks (account_id, status, run_after) WHERE status IN (1, 2);

CREATE FUNCTION claim_due_tasks(p_owner text, p_lease_ms bigint, p_limit integer, p_default_cap integer,
                                p_max_accounts integer)
RETURNS SETOF tasks LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    start_id bigint := floor(random() * ((SELECT coalesce(max(id), 0) FROM accounts) + 1))::bigint;
    current_id bigint := start_id - 1;
    next_id bigint;
    wrapped boolean := false;
    visited integer := 0;
    contributors integer := 0;
    before integer;
    cap integer;
    room integer;
    picked text[] := '{}';
    owners bigint[] := '{}';
    stamps timestamptz[] := '{}';
    t record;
BEGIN
    LOOP
        SELECT account_id INTO next_id FROM tasks
        WHERE status IN (1, 2) AND account_id > current_id ORDER BY account_id LIMIT 1;
        IF NOT FOUND THEN
            EXIT WHEN wrapped;
            wrapped := true;
            current_id := -1;
            CONTINUE;
        END IF;
        EXIT WHEN wrapped AND next_id >= start_id;
        current_id := next_id;
        visited := visited + 1;
        EXIT WHEN visited > p_max_accounts;
        SELECT coalesce(a.max_concurrent_tasks, p_default_cap) INTO cap FROM accounts a WHERE a.id = current_id;
        room := p_limit;
        IF cap > 0 THEN
            IF pg_try_advisory_xact_lock(hashtextextended('gesso-account-cap:' || current_id, 0)) THEN
                SELECT greatest(0, cap - count(*)) INTO room FROM tasks WHERE account_id = current_id AND status = 2;
            ELSE
                room := 0;
            END IF;
        END IF;
        before := cardinality(picked);
        FOR t IN SELECT id, run_after FROM tasks
                 WHERE account_id = current_id AND status = 2 AND run_after <= now()
                   AND attempts < max_attempts AND deadline_at > now()
                 ORDER BY run_after LIMIT p_limit FOR UPDATE SKIP LOCKED LOOP
            picked := picked || t.id; owners := owners || current_id; stamps := stamps || t.run_after;
        END LOOP;
        FOR t IN SELECT id, run_after FROM tasks
                 WHERE account_id = current_id AND status = 1 AND run_after <= now()
                   AND attempts < max_attempts AND deadline_at > now()
                 ORDER BY run_after LIMIT least(room, p_limit) FOR UPDATE SKIP LOCKED LOOP
            picked := picked || t.id; owners := owners || current_id; stamps := stamps || t.run_after;
        END LOOP;
        -- Enough accounts to fill the batch with each one's oldest: the others wait for a later claim
        -- (the next starts from another random account), and a claim costs the same with many accounts.
        IF cardinality(picked) > before THEN
            contributors := contributors + 1;
            EXIT WHEN contributors >= p_limit;
        END IF;
    END LOOP;
    RETURN QUERY
    UPDATE tasks u
    SET status = 2, lease_owner = p_owner, lease_token = gen_random_uuid(),
        lease_expires_at = now() + p_lease_ms * interval '1 millisecond',
        run_after = now() + p_lease_ms * interval '1 millisecond',
        attempts = u.attempts + 1, started_at = coalesce(u.started_at, now())
    FROM (SELECT c.id FROM (SELECT p.id, p.due,
                                   row_number() OVER (PARTITION BY p.owner ORDER BY p.due) AS turn
                            FROM unnest(picked, owners, stamps) AS p (id, owner, due)) c
          ORDER BY c.turn, c.due
          LIMIT p_limit) chosen
    WHERE u.id = chosen.id
    RETURNING u.*;
END
$$;
