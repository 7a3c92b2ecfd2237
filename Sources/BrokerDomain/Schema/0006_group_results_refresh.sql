-- A live group subscription's results are recomputed in the background (`GroupResultsRefresh`), so the
-- sender's webhook hears of new figures without polling. This records when each was last compared with
-- its latest release; the refresh claims the oldest due one with FOR UPDATE SKIP LOCKED, so two server
-- instances never compute the same request side by side.
ALTER TABLE group_requests ADD COLUMN results_checked_at timestamptz;
-- split
CREATE INDEX group_requests_live_subscriptions ON group_requests (results_checked_at NULLS FIRST)
    WHERE status = 'accepted' AND subscription_days IS NOT NULL AND ended_at IS NULL;
-- split
-- Each release of a group subscription records a contribution in the cohort members' access logs at most
-- once a UTC day per request; this finds today's entry for a member in one probe (the per-person index
-- would walk all of the person's entries of the day).
CREATE INDEX access_log_group_contributions ON access_log (request_id, user_id, at) WHERE kind = 'group';
