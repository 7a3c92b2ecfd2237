-- Issue 29, item 1: a person may grant less than a request asks (some of its types, part of its window,
-- a shorter subscription or none).
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

-- The request's own columns (`types`, `window_from`, `window_to`, `subscription_days`) hold the terms in
-- force: as asked while the request is pending, as granted once it is accepted. Every statement that
-- releases data (downloads, cursors, subscriptions' ends and expiries, `data_available` webhooks, runs)
-- reads them, so each honours a grant without a case of its own. What was asked is kept here, unchanged.
ALTER TABLE single_requests
    ADD COLUMN asked_types smallint[],
    ADD COLUMN asked_window_from timestamptz,
    ADD COLUMN asked_window_to timestamptz,
    ADD COLUMN asked_subscription_days integer CHECK (asked_subscription_days BETWEEN 1 AND 3650),
    -- The grant's own id: receipts, the access log and the audit trail name it. Set on acceptance.
    ADD COLUMN grant_id uuid UNIQUE;
-- split

-- Requests accepted before grants existed become grants of everything they asked.
UPDATE single_requests SET
    asked_types = types, asked_window_from = window_from, asked_window_to = window_to,
    asked_subscription_days = subscription_days,
    grant_id = CASE WHEN status = 'accepted' THEN gen_random_uuid() END;
-- split
ALTER TABLE single_requests ALTER COLUMN asked_types SET NOT NULL;
-- split
-- A grant never widens the request: its types are among those asked. (Its window and subscription are
-- checked by the service, which names the field; this keeps a wrong UPDATE from ever storing more.)
ALTER TABLE single_requests ADD CONSTRAINT single_requests_grant_within_ask
    CHECK (types <@ asked_types AND cardinality(types) > 0
           AND (subscription_days IS NULL OR subscription_days <= coalesce(asked_subscription_days, 0)));
-- split
ALTER TABLE single_requests ADD CONSTRAINT single_requests_grant_when_accepted
    CHECK ((status = 'accepted') = (grant_id IS NOT NULL));
-- split
ALTER TABLE access_log ADD COLUMN grant_id uuid;
