-- Accounts, their credentials and sessions, and the hash-chained audit log.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

CREATE TABLE accounts (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    role          text NOT NULL CHECK (role IN ('user', 'third_party', 'auditor')),
    -- Stored lower-cased by the application, so a plain unique index is case-insensitive.
    email         text NOT NULL UNIQUE,
    -- Null for an auditor until they choose a password at activation.
    password_hash text,
    status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'active')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    activated_at  timestamptz
);
-- split

-- A person (role `user`). `person_number` is a compact internal number for frozen cohorts.
CREATE TABLE users (
    account_id    uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    person_number bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    fiscal_code   text NOT NULL UNIQUE,
    full_name     text NOT NULL,
    birth_date    date NOT NULL,
    sex           char(1) NOT NULL CHECK (sex IN ('F', 'M'))
);
-- split

CREATE TABLE third_parties (
    account_id   uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    vat_number   text NOT NULL UNIQUE,
    company_name text NOT NULL,
    description  text
);
-- split

-- Tokens are 256-bit random values; only their SHA-256 is stored.
CREATE TABLE activation_tokens (
    token_hash bytea PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
-- split
CREATE INDEX activation_tokens_account ON activation_tokens (account_id);
-- split

CREATE TABLE sessions (
    token_hash bytea PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
);
-- split
CREATE INDEX sessions_account ON sessions (account_id) WHERE revoked_at IS NULL;
-- split

CREATE TABLE api_keys (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id   uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name         text NOT NULL,
    prefix       text NOT NULL,
    secret_hash  bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
-- split
CREATE INDEX api_keys_account ON api_keys (account_id, created_at DESC) WHERE revoked_at IS NULL;
-- split

-- Failed logins, kept in the database (not in memory) so throttling holds across server instances.
CREATE TABLE failed_logins (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email          text NOT NULL,
    client_address text NOT NULL,
    at             timestamptz NOT NULL DEFAULT now()
);
-- split
CREATE INDEX failed_logins_email ON failed_logins (email, at);
-- split
CREATE INDEX failed_logins_client ON failed_logins (client_address, at);
-- split

-- Secrets the server derives keyed hashes from (the audit pseudonym key). Created once, here, so
-- every instance on one database derives the same pseudonyms.
CREATE TABLE server_secrets (
    name  text PRIMARY KEY,
    value bytea NOT NULL
);
-- split
INSERT INTO server_secrets (name, value)
-- gen_random_uuid() draws from pg_strong_random(): two of them give 244 random bits.
VALUES ('audit_pseudonym_key', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));
-- split

-- The audit log. Each event's hash is SHA-256(previous hash ‖ canonical event), computed here in
-- SQL by `append_audit_event`, in the same transaction as the change it records.
CREATE TABLE audit_events (
    seq        bigint PRIMARY KEY,
    at         timestamptz NOT NULL,
    -- A person appears only as a pseudonym (HMAC of their id); companies and auditors by account id.
    actor_id   text,
    actor_role text NOT NULL,
    action     text NOT NULL,
    request_id uuid,
    subject    text,
    details    jsonb NOT NULL DEFAULT '{}'::jsonb,
    prev_hash  bytea NOT NULL,
    hash       bytea NOT NULL
);
-- split
CREATE INDEX audit_events_at ON audit_events (at);
-- split
CREATE INDEX audit_events_action ON audit_events (action, at);
-- split

-- One row: the chain's head. Updating it serialises writers, so seq and prev_hash never fork.
CREATE TABLE audit_chain_head (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    seq       bigint NOT NULL,
    hash      bytea NOT NULL
);
-- split
INSERT INTO audit_chain_head (seq, hash) VALUES (0, '\x0000000000000000000000000000000000000000000000000000000000000000');
-- split

-- The canonical text of an event: the bytes its hash covers. jsonb's text form is already
-- canonical (keys sorted by length then bytes, no insignificant space).
CREATE FUNCTION audit_event_canonical(
    p_seq bigint, p_at timestamptz, p_actor_id text, p_actor_role text, p_action text,
    p_request_id uuid, p_subject text, p_details jsonb
) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
    SELECT convert_to(concat_ws(E'\x1f',
        p_seq::text,
        to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        coalesce(p_actor_id, ''),
        p_actor_role,
        p_action,
        coalesce(p_request_id::text, ''),
        coalesce(p_subject, ''),
        p_details::text), 'UTF8')
$$;
-- split

CREATE FUNCTION append_audit_event(
    p_actor_id text, p_actor_role text, p_action text,
    p_request_id uuid, p_subject text, p_details jsonb
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_seq  bigint;
    v_prev bytea;
    v_at   timestamptz := date_trunc('milliseconds', clock_timestamp());
    v_hash bytea;
BEGIN
    SELECT seq + 1, hash INTO v_seq, v_prev FROM audit_chain_head FOR UPDATE;
    v_hash := sha256(v_prev || audit_event_canonical(
        v_seq, v_at, p_actor_id, p_actor_role, p_action, p_request_id, p_subject, p_details));
    INSERT INTO audit_events (seq, at, actor_id, actor_role, action, request_id, subject, details, prev_hash, hash)
    VALUES (v_seq, v_at, p_actor_id, p_actor_role, p_action, p_request_id, p_subject, p_details, v_prev, v_hash);
    UPDATE audit_chain_head SET seq = v_seq, hash = v_hash;
    RETURN v_seq;
END
$$;
-- split
