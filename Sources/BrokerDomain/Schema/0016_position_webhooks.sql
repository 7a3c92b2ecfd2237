-- Webhooks for positions (issue 19): `subscription.positions_available`, coalesced per subscription while
-- undelivered as `subscription.data_available` is (0003). A runner's phone uploads every few seconds;
-- without coalescing a company would get an event per upload.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

CREATE UNIQUE INDEX webhook_events_one_positions_available ON webhook_events (request_id)
    WHERE type = 'subscription.positions_available' AND status = 'pending' AND attempts = 0;
-- split

-- As 0003's, coalescing on either index: `ON CONFLICT` without a target covers every unique index, and
-- the only ones an event can meet are the two above.
CREATE OR REPLACE FUNCTION enqueue_webhook_event(p_third_party uuid, p_type text, p_request uuid, p_data jsonb)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO webhook_events (third_party_id, type, request_id, data)
    SELECT p_third_party, p_type, p_request, p_data FROM webhooks WHERE third_party_id = p_third_party
    ON CONFLICT DO NOTHING
$$;
