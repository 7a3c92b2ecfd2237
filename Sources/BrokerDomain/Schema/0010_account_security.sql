-- Password-guess throttling that one address cannot turn against everyone, and that a burst cannot outrun.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them).
--
-- `failed_logins` (one row per failure, counted by a read before the write) let thirty concurrent guesses
-- all pass the check before any of them was recorded. A bucket is now one row, and an attempt reserves
-- its place in it with a single INSERT … ON CONFLICT DO UPDATE that takes the row lock: the check and the
-- record are one statement, so concurrent attempts queue on the row and only the allowed number pass.
CREATE TABLE login_throttle (
    -- 'account:<normalised email>' (an email that names no account throttles the same way) or
    -- 'address:<client address>'.
    bucket          text PRIMARY KEY,
    -- Attempts counted since the bucket last went quiet (each is counted before its password is checked;
    -- a right password gives its place back).
    failures          integer NOT NULL,
    -- The first failure of the current count; the count starts again once a window has passed since
    -- both this and the end of the last block.
    window_started_at timestamptz NOT NULL,
    -- No attempt is evaluated before this instant ('-infinity' until the bucket is first blocked).
    blocked_until     timestamptz NOT NULL
);
-- split
CREATE INDEX login_throttle_quiet ON login_throttle ((greatest(window_started_at, blocked_until)));
-- split
DROP TABLE failed_logins;
-- split

-- Unactivated accounts expire (ACTIVATION_EXPIRY_HOURS, 48 by default) and free their email, fiscal code
-- and VAT number: registering someone else's identity and never activating must not block its owner.
-- The sweep and registration find them by this index.
CREATE INDEX accounts_unactivated ON accounts (created_at) WHERE status = 'pending';
-- split
-- When the account was last sent a mail it did not ask for itself: an activation mail again, or "someone
-- tried to register with your address". Both wait a while between two mails to one account, so neither
-- "send it again" nor repeated registrations can flood someone's mailbox.
-- Null until the first such mail.
ALTER TABLE accounts ADD COLUMN account_mail_sent_at timestamptz;
-- split
