-- The delivery loop's claim must cost the same whatever the statistics of `webhook_events` say (issue 33).
-- After a burst of new events and before autoanalyze, the statistics say nothing is pending, so every
-- partial index on pending events looks empty, and the planner picked among them by size: the claim's
-- per-candidate check for an earlier pending event of the same request (`WebhookDeliveryStore.claim`)
-- scanned the whole due index for every candidate, 0.8–3 s a claim. The due index's predicate now also
-- names `next_attempt_at` (never NULL: the column is NOT NULL, so the index holds the same rows), which
-- the claim's candidates bound (`next_attempt_at <= now()` implies it) and that check does not: the check
-- can use only `webhook_events_pending_by_request`, an index probe.
CREATE INDEX webhook_events_due_at ON webhook_events (next_attempt_at) WHERE status = 'pending' AND next_attempt_at IS NOT NULL;
-- split
DROP INDEX webhook_events_due;
-- split
-- Fresh statistics sooner after a burst: analyze after 1,000 changed rows whatever the table's size (by
-- default 10 % of it, which a table of years of delivered events reaches rarely), and vacuum the dead
-- versions that claims and records leave at 2 % rather than 20 %.
ALTER TABLE webhook_events SET (
    autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 1000, autovacuum_vacuum_scale_factor = 0.02);
