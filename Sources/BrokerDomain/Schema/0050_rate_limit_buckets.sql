-- The per-account rate limits (`RATE_LIMIT_*`) move from each server instance's memory into the database
-- (issue 34): behind a load balancer an account got up to (instances × limit), since each instance kept its
-- own buckets. Now every instance charges the same row, so the limit holds whatever the number of
-- instances, as the login throttle's has since 0010.
--
-- One row per account and operation, in the GCRA form the in-memory buckets had: the one instant at which
-- the bucket is (or will again be) full. A charge is a single `INSERT … ON CONFLICT … DO UPDATE … WHERE …
-- RETURNING` (`RateLimitStore.charge`): concurrent charges of one bucket queue on its row, and a refused
-- one writes nothing. A missing row is a full bucket, so full rows are deleted by the housekeeping sweep
-- (`RateLimiter.forgetFullBuckets`, a bounded batch at a time); an erased account's go with it.
CREATE TABLE rate_limit_buckets (
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- `RateLimitedOperation`'s raw value: 'uploads', 'imports', 'downloads', 'groupRequests', 'statistics'.
    operation  text NOT NULL,
    -- When the bucket is full again; a request is admitted while this is at most (capacity − 1) refill
    -- intervals ahead of now, and moves it one interval on.
    full_at    timestamptz NOT NULL,
    PRIMARY KEY (account_id, operation)
) WITH (fillfactor = 70);
-- Room left on each page (fillfactor) and no index on `full_at`: every admitted request rewrites its row,
-- and an update that changes no indexed column and fits on its page is a HOT update, which writes no index
-- entry. The sweep reads the table in order instead of an index; it holds at most (accounts × operations)
-- rows, most of them idle (full).
