-- Issue 30, item 1: password reset. `POST /v1/password-resets` mails the owner of an activated account a
-- token; `POST /v1/password-resets/{token}` sets a new password with it, once, within an hour.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

-- Like activation tokens, only the SHA-256 of the 256-bit token is stored, so a database leak gives no
-- usable link. Times are the server's clock (`WallClock`), not `now()`: the expiry is a rule of the
-- application, and tests move that clock. A new token for an account retires its earlier ones, and a
-- reset uses up all of them, so at most one link per account works at a time.
CREATE TABLE password_reset_tokens (
    token_hash bytea PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
-- split
CREATE INDEX password_reset_tokens_account ON password_reset_tokens (account_id) WHERE used_at IS NULL;
