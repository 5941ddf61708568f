-- The fair claim of sql/011, set-based (docs/architecture.md#claims): the same choice — each account's
-- oldest due tasks before anyone's second, within each account's concurrency cap — made by a handful of
-- statements whatever the batch, instead of three or four statements for every account visited. The
-- drain benchmark with 64 accounts: 1 444 tasks/s with the loop, 1 862 with this, 1 898 with the unfair
-- claim of before (docs/benchmarks.md#workers-drain-rate-and-dispatch-latency-testsbenchdrain_benchsh).
-- Each account's share of the batch is locked as it is read (FOR UPDATE SKIP LOCKED, so concurrent
-- claims pass over each other's picks), and only as much as the batch can use: an even share each, then
-- shares of what is left for the accounts that had more.
CREATE OR REPLACE FUNCTION claim_due_tasks(p_owner text, p_lease_ms bigint, p_limit integer, p_default_cap integer,
                                           p_max_accounts integer)
RETURNS SETOF tasks LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    start_id bigint := floor(random() * ((SELECT coalesce(max(id), 0) FROM accounts) + 1))::bigint;
    ids bigint[];
    rooms integer[];
    capped integer[];
    share integer;
    picked text[] := '{}';
    owners integer[] := '{}';
    stamps timestamptz[] := '{}';
    more text[];
    more_owners integer[];
    more_stamps timestamptz[];
    saturated integer[];
    round_owners integer[];
BEGIN
    -- 1. Up to p_limit accounts with due tasks, in account order from a random one, wrapping: a skip scan
    --    of the open-task index (one probe per account visited), at most p_max_accounts visited.
    WITH RECURSIVE walk (account_id, wrapped, visited) AS (
        SELECT (SELECT t.account_id FROM tasks t WHERE t.status IN (1, 2) AND t.account_id >= start_id
                ORDER BY t.account_id LIMIT 1), false, 1
      UNION ALL
        SELECT (SELECT t.account_id FROM tasks t WHERE t.status IN (1, 2) AND t.account_id > coalesce(w.account_id, -1)
                ORDER BY t.account_id LIMIT 1),
               w.wrapped OR w.account_id IS NULL, w.visited + 1
        FROM walk w
        WHERE w.visited <= p_max_accounts AND NOT (w.wrapped AND (w.account_id IS NULL OR w.account_id >= start_id))
    )
    SELECT array_agg(d.account_id ORDER BY d.visited) INTO ids
    FROM (SELECT w.account_id, w.visited FROM walk w
          WHERE w.account_id IS NOT NULL AND NOT (w.wrapped AND w.account_id >= start_id)
            AND w.visited <= p_max_accounts
            AND EXISTS (SELECT 1 FROM tasks t WHERE t.account_id = w.account_id AND t.status IN (1, 2)
                          AND t.run_after <= now() AND t.attempts < t.max_attempts AND t.deadline_at > now())
          LIMIT p_limit) d;  -- no ORDER BY: the walk is produced in visit order, and stops at the limit
    IF ids IS NULL THEN
        RETURN;
    END IF;

    -- 2. Room under each account's cap. Without caps (the default) every account has the whole batch.
    --    A capped account is locked first (tried, never waited for) and its running tasks are counted
    --    by the next statement, with a snapshot taken after the lock, so two workers cannot both fill
    --    the same room.
    capped := ARRAY(SELECT u.ord::integer FROM unnest(ids) WITH ORDINALITY u (id, ord) JOIN accounts a ON a.id = u.id
                    WHERE coalesce(a.max_concurrent_tasks, p_default_cap) > 0);
    IF cardinality(capped) = 0 THEN
        rooms := array_fill(p_limit, ARRAY[cardinality(ids)]);
    ELSE
        capped := ARRAY(SELECT c.ord FROM unnest(capped) c (ord)
                        WHERE pg_try_advisory_xact_lock(hashtextextended('gesso-account-cap:' || ids[c.ord], 0)));
        SELECT array_agg(CASE WHEN coalesce(a.max_concurrent_tasks, p_default_cap) <= 0 THEN p_limit
                              WHEN u.ord = ANY(capped) THEN
                                  greatest(0, coalesce(a.max_concurrent_tasks, p_default_cap) -
                                              (SELECT count(*) FROM tasks t WHERE t.account_id = u.id AND t.status = 2))
                              ELSE 0 END ORDER BY u.ord) INTO rooms
        FROM unnest(ids) WITH ORDINALITY u (id, ord) JOIN accounts a ON a.id = u.id;
    END IF;

    -- 3. Each account's oldest due tasks, an even share of the batch each, locked as they are read
    --    (SKIP LOCKED: another worker's picks are passed over); then shares again for the accounts that
    --    had more, while the batch is short.
    share := ceil(p_limit::numeric / cardinality(ids));
    saturated := ARRAY(SELECT generate_series(1, cardinality(ids)));
    WHILE cardinality(picked) < p_limit AND cardinality(saturated) > 0 LOOP
        SELECT coalesce(array_agg(x.id), '{}'), coalesce(array_agg(x.ord), '{}'), coalesce(array_agg(x.run_after), '{}')
        INTO more, more_owners, more_stamps
        FROM (SELECT s.ord, ids[s.ord] AS account_id FROM unnest(saturated) s (ord)) u
        CROSS JOIN LATERAL (
            SELECT t.id, t.run_after, u.ord FROM tasks t
            WHERE t.account_id = u.account_id AND t.status = 2 AND t.run_after <= now()
              AND t.attempts < t.max_attempts AND t.deadline_at > now() AND NOT (t.id = ANY(picked))
            ORDER BY t.run_after LIMIT share FOR UPDATE SKIP LOCKED) x;
        round_owners := more_owners;
        picked := picked || more; owners := owners || more_owners; stamps := stamps || more_stamps;
        SELECT coalesce(array_agg(x.id), '{}'), coalesce(array_agg(x.ord), '{}'), coalesce(array_agg(x.run_after), '{}')
        INTO more, more_owners, more_stamps
        FROM (SELECT s.ord, ids[s.ord] AS account_id, rooms[s.ord] AS room FROM unnest(saturated) s (ord)) u
        CROSS JOIN LATERAL (
            SELECT t.id, t.run_after, u.ord FROM tasks t
            WHERE t.account_id = u.account_id AND t.status = 1 AND t.run_after <= now()
              AND t.attempts < t.max_attempts AND t.deadline_at > now() AND NOT (t.id = ANY(picked))
            ORDER BY t.run_after LIMIT least(u.room, share) FOR UPDATE SKIP LOCKED) x;
        picked := picked || more; owners := owners || more_owners; stamps := stamps || more_stamps;
        -- Rooms shrink by the queued tasks taken; an account that gave a whole share may have more.
        rooms := ARRAY(SELECT r.room - (SELECT count(*) FROM unnest(more_owners) o WHERE o = r.ord)
                       FROM unnest(rooms) WITH ORDINALITY r (room, ord) ORDER BY r.ord);
        round_owners := round_owners || more_owners;
        saturated := ARRAY(SELECT o FROM unnest(round_owners) o GROUP BY o HAVING count(*) >= share);
        share := ceil((p_limit - cardinality(picked))::numeric / greatest(cardinality(saturated), 1));
    END LOOP;

    -- 4. The batch: every account's oldest before anyone's second, then the next, up to p_limit.
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
