-- The per-key rate limit (docs/api.md#limits): one token bucket per API key, shared by every server.
-- Servers take tokens in small batches (take_rate_tokens) and spend them locally, so a request costs a
-- statement only when its server's batch is spent. Unlogged: a crash of PostgreSQL refills every bucket,
-- which a rate limit can afford.
CREATE UNLOGGED TABLE rate_buckets (
    key_hash    text             PRIMARY KEY,
    tokens      double precision NOT NULL,
    updated_at  timestamptz      NOT NULL
);

-- Takes up to p_want tokens from the key's bucket, refilled at its account's rate up to its burst (the
-- account's own limits, else p_default_rate and p_default_burst; a burst of 0 is twice the rate, as in
-- core/limits.cpp). rate 0 in the answer: the key is unlimited, or unknown (authentication answers it).
-- VOLATILE, so the bucket is read after its row lock, with a fresh snapshot.
CREATE FUNCTION take_rate_tokens(p_key text, p_default_rate integer, p_default_burst integer, p_want integer,
                                 OUT granted integer, OUT available double precision,
                                 OUT rate integer, OUT burst integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    stamp timestamptz;
    current double precision;
BEGIN
    SELECT coalesce(a.rate_limit_per_second, p_default_rate), coalesce(a.rate_limit_burst, p_default_burst)
    INTO rate, burst
    FROM api_keys k JOIN accounts a ON a.id = k.account_id
    WHERE k.key_hash = p_key AND k.revoked_at IS NULL;
    IF NOT FOUND OR rate IS NULL OR rate <= 0 THEN
        granted := 0; available := 0; rate := 0; burst := 0;
        RETURN;
    END IF;
    IF burst IS NULL OR burst <= 0 THEN
        burst := 2 * rate;
    END IF;
    INSERT INTO rate_buckets (key_hash, tokens, updated_at) VALUES (p_key, burst, clock_timestamp())
    ON CONFLICT (key_hash) DO NOTHING;
    PERFORM 1 FROM rate_buckets WHERE key_hash = p_key FOR UPDATE;
    stamp := clock_timestamp();
    SELECT least(burst, b.tokens + rate * greatest(0, extract(epoch FROM stamp - b.updated_at)))
    INTO current FROM rate_buckets b WHERE b.key_hash = p_key;
    granted := greatest(0, least(p_want, floor(current)))::integer;
    available := current - granted;
    UPDATE rate_buckets SET tokens = available, updated_at = stamp WHERE key_hash = p_key;
END
$$;
