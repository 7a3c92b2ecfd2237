-- Issue 30, item 2: a second factor (TOTP, RFC 6238) for any account, required of auditors.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

-- One row per account that has started enrolling. `secret` is the confirmed factor that sign-in asks for
-- (NULL: none); `pending_secret` an enrolment not confirmed yet, which changes nothing until its first
-- code confirms it and it replaces `secret`. The secrets are kept as they are: a TOTP check needs the key
-- itself, so unlike a password it cannot be hashed.
-- `last_step` is the last time step (Unix time / 30 s) whose code was accepted: a code is accepted only
-- for a later step, by a conditional UPDATE, so a code (or an earlier one of its window) is never
-- accepted twice, even by two requests at once.
CREATE TABLE second_factors (
    account_id     uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    secret         bytea,
    pending_secret bytea,
    last_step      bigint NOT NULL DEFAULT -1,
    confirmed_at   timestamptz,
    CHECK ((secret IS NULL) = (confirmed_at IS NULL))
);
-- split

-- Ten single-use recovery codes per confirmed factor, only their SHA-256 (each is 80 random bits).
-- Confirming a new secret replaces them all; turning the factor off deletes them.
CREATE TABLE recovery_codes (
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    code_hash  bytea NOT NULL,
    used_at    timestamptz,
    PRIMARY KEY (account_id, code_hash)
);
-- split

-- The first step of a sign-in that needs a code: a right password on an account with a confirmed factor
-- gives this short-lived token instead of a session. Only its SHA-256 is kept; it gives at most one session
-- (`used_at`), and only while the password it was given for is still the account's (`password_hash`).
CREATE TABLE second_factor_challenges (
    token_hash    bytea PRIMARY KEY,
    account_id    uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    password_hash text NOT NULL,
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz
);
-- split
CREATE INDEX second_factor_challenges_expiry ON second_factor_challenges (expires_at);
