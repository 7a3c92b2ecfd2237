-- Single requests and subscriptions, blocks, the people's access log and the webhook outbox.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

-- When each upload arrived: (person, last arrival number of the upload, time). Subscription expiry is
-- computed from time, so "what arrived before endsAt" must be answerable without any background job.
CREATE TABLE sample_batches (
    user_id      uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    last_arrival bigint NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, last_arrival)
);
-- split

-- A third party's request for one person's data. The subject columns keep what the sender typed (an
-- email or a fiscal code); erasure clears them together with `user_id`.
CREATE TABLE single_requests (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    third_party_id      uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    user_id             uuid REFERENCES accounts (id) ON DELETE SET NULL,
    subject_email       text,
    subject_fiscal_code text,
    types               smallint[] NOT NULL CHECK (cardinality(types) > 0),
    purpose             text NOT NULL,
    window_from         timestamptz,
    window_to           timestamptz,
    status              text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'refused', 'cancelled')),
    created_at          timestamptz NOT NULL DEFAULT now(),
    decided_at          timestamptz,
    -- The person's last arrival number when the request was accepted: a one-off request releases
    -- nothing that arrived later.
    accepted_arrival    bigint,
    subscription_days   integer CHECK (subscription_days BETWEEN 1 AND 3650),
    ends_at             timestamptz,
    ended_at            timestamptz,
    ended_by            text CHECK (ended_by IN ('user', 'third_party')),
    -- The person's last arrival number when the subscription was ended by either side.
    ended_arrival       bigint,
    -- Set once the `subscription.ended` (expired) webhook is queued; expiry itself is computed from time.
    expiry_announced    boolean NOT NULL DEFAULT false
);
-- split

-- A third party never has two pending requests to one person: settled here, not by reading first.
CREATE UNIQUE INDEX single_requests_one_pending ON single_requests (third_party_id, user_id) WHERE status = 'pending';
-- split
CREATE INDEX single_requests_sent ON single_requests (third_party_id, created_at DESC, id DESC);
-- split
CREATE INDEX single_requests_received ON single_requests (user_id, created_at DESC, id DESC);
-- split
-- Live subscriptions of a person, looked up on every upload (data_available webhooks).
CREATE INDEX single_requests_live ON single_requests (user_id)
    WHERE status = 'accepted' AND subscription_days IS NOT NULL AND ended_at IS NULL;
-- split
-- Subscriptions whose expiry has not been announced yet, for the expiry sweep.
CREATE INDEX single_requests_unannounced_expiry ON single_requests (ends_at)
    WHERE status = 'accepted' AND ended_at IS NULL AND NOT expiry_announced;
-- split

-- A person's blocked companies: they cannot send the person requests.
CREATE TABLE blocks (
    user_id        uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    third_party_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    blocked_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, third_party_id)
);
-- split

-- Every release of a person's data, for the person to read (`GET /v1/me/access-log`). The company's id
-- and name are copied, so the person's record outlives the company's account.
CREATE TABLE access_log (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id        uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    at             timestamptz NOT NULL DEFAULT clock_timestamp(),
    third_party_id uuid NOT NULL,
    company_name   text NOT NULL,
    request_id     uuid NOT NULL,
    kind           text NOT NULL CHECK (kind IN ('single', 'group')),
    types          smallint[] NOT NULL,
    -- Rows released; null for a group release (the person contributed to an anonymised aggregate).
    samples        bigint
);
-- split
CREATE INDEX access_log_user ON access_log (user_id, at DESC, id DESC);
-- split

-- A third party's webhook endpoint. The secret signs deliveries, so it is kept as given.
CREATE TABLE webhooks (
    third_party_id uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    url            text NOT NULL,
    secret         text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
-- split

-- The outbox: written in the same transaction as the change it announces, delivered by the server's
-- delivery loop. `seq` orders events of one request; `next_attempt_at` doubles as the lease of an
-- event being delivered, so another instance leaves it alone until the lease runs out.
CREATE TABLE webhook_events (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq             bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    third_party_id  uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    type            text NOT NULL,
    request_id      uuid,
    data            jsonb NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz
);
-- split
CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at) WHERE status = 'pending';
-- split
CREATE INDEX webhook_events_pending_by_request ON webhook_events (third_party_id, request_id, seq) WHERE status = 'pending';
-- split
CREATE INDEX webhook_events_listing ON webhook_events (third_party_id, created_at DESC, id DESC);
-- split
-- One undelivered data_available event per subscription is enough: it carries the earliest cursor.
CREATE UNIQUE INDEX webhook_events_one_data_available ON webhook_events (request_id)
    WHERE type = 'subscription.data_available' AND status = 'pending' AND attempts = 0;
-- split

-- Every delivery attempt, successful or not.
CREATE TABLE webhook_attempts (
    event_id    uuid NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    attempt     integer NOT NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    status_code integer,
    error       text,
    duration_ms integer NOT NULL,
    PRIMARY KEY (event_id, attempt)
);
-- split

-- Queues an event for the third party's webhook, if it has one; called inside the transaction of the
-- change the event announces.
CREATE FUNCTION enqueue_webhook_event(p_third_party uuid, p_type text, p_request uuid, p_data jsonb)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO webhook_events (third_party_id, type, request_id, data)
    SELECT p_third_party, p_type, p_request, p_data FROM webhooks WHERE third_party_id = p_third_party
    ON CONFLICT (request_id) WHERE type = 'subscription.data_available' AND status = 'pending' AND attempts = 0
    DO NOTHING
$$;
