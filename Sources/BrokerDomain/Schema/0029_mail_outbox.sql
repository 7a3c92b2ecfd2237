-- Issue 30, item 3: every mail is written to an outbox in the same transaction as the event that causes
-- it, and a delivery loop (`MailDelivery`, one per instance, leases in the rows) sends it with bounded
-- waits and retries. A mail is therefore sent if and only if its event committed, and no request waits
-- for a mail program. Delivery is at least once: a crash between the send and its record sends the mail
-- again when the lease ends, with the same Message-ID, so a mail client shows it once.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

CREATE TABLE mail_outbox (
    id              bigserial PRIMARY KEY,
    -- The Message-ID's left part: fixed at the insert, so every attempt sends the same message.
    message_id      uuid NOT NULL UNIQUE,
    kind            text NOT NULL,
    -- The account the mail is about, when there is one: erasing it drops its unsent mails.
    account_id      uuid REFERENCES accounts (id) ON DELETE CASCADE,
    recipient       text NOT NULL,
    subject         text NOT NULL,
    -- Cleared once the mail is sent or dead: bodies carry tokens (activation, reset), which must not
    -- outlive their mail in a second place.
    body            text,
    list_unsubscribe text,
    -- At most one mail per key (a subscription's "ends in three days", a week's digest): instances and
    -- repeated sweeps cannot write it twice.
    dedupe_key      text UNIQUE,
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'dead')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    leased_until    timestamptz,
    last_error      text,
    created_at      timestamptz NOT NULL,
    sent_at         timestamptz
);
-- split
CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at, id) WHERE status = 'pending';
-- split
CREATE INDEX mail_outbox_dead ON mail_outbox (created_at) WHERE status = 'dead';
-- split

-- The kinds of notification an account turned off (security mails cannot be: activation, reset, a
-- changed password, a new API key).
CREATE TABLE mail_opt_outs (
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    kind       text NOT NULL,
    PRIMARY KEY (account_id, kind)
);
-- split

-- The weekly digests: one row per week, written a batch of people at a time (`after_account` is the
-- last account written to); a batch takes the row's lock, so instances share the work and a crash
-- resumes where it stopped.
CREATE TABLE mail_digest_weeks (
    week_start    date PRIMARY KEY,
    after_account uuid,
    done          boolean NOT NULL DEFAULT false,
    written       integer NOT NULL DEFAULT 0
);
-- split

-- The key of one-click unsubscribe links: HMAC of the account and the kind, so a link works for that
-- account and kind only, and needs no sign-in (RFC 8058).
INSERT INTO server_secrets (name, value)
-- gen_random_uuid() draws from pg_strong_random(): two of them give 244 random bits.
VALUES ('mail_unsubscribe_key', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));

-- split

-- A new request is announced to its person by a sweep, not by its own transaction: creating a request
-- must run the same statements whether it reaches a person or nobody (the sender must not learn which),
-- and a request to nobody is announced once someone activates an account it names. Requests made before
-- this migration are not announced.
ALTER TABLE single_requests ADD COLUMN person_notified boolean NOT NULL DEFAULT true;
-- split
ALTER TABLE single_requests ALTER COLUMN person_notified SET DEFAULT false;
-- split
CREATE INDEX single_requests_unnotified ON single_requests (created_at) WHERE NOT person_notified;
-- split
-- Set once the person was told that the subscription ends within three days.
ALTER TABLE single_requests ADD COLUMN ending_notified boolean NOT NULL DEFAULT false;
-- split
CREATE INDEX single_requests_ending_unnotified ON single_requests (ends_at)
    WHERE status = 'accepted' AND ended_at IS NULL AND NOT ending_notified;
