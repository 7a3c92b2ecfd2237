-- Issue 17: single requests no longer tell a company who is registered, pending requests expire, and
-- erasing a company keeps the people's history of its requests.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

-- A pending request expires (status 'expired') once `expires_at` has passed. Requests to nobody are
-- stored like any other and must not wait forever; nor must a request the person never answers.
ALTER TABLE single_requests DROP CONSTRAINT single_requests_status_check;
-- split
ALTER TABLE single_requests ADD CONSTRAINT single_requests_status_check
    CHECK (status IN ('pending', 'accepted', 'refused', 'cancelled', 'expired'));
-- split
ALTER TABLE single_requests ADD COLUMN expires_at timestamptz;
-- split
-- Requests already pending get the default 30 days from their creation, but at least a week from now,
-- so no one's pending request vanishes the moment this migration runs.
UPDATE single_requests SET expires_at = greatest(created_at + interval '30 days', now() + interval '7 days');
-- split
ALTER TABLE single_requests ALTER COLUMN expires_at SET NOT NULL;
-- split

-- One pending request per sender and subject *as the sender typed it*, not per person: keyed by person,
-- the 409 for a second request told the sender that the email and the fiscal code it used were one
-- registered person. A request to nobody (user_id NULL) is held to the same rule, so it answers alike.
DROP INDEX single_requests_one_pending;
-- split
CREATE UNIQUE INDEX single_requests_one_pending_subject
    ON single_requests (third_party_id, coalesce(subject_fiscal_code, subject_email)) WHERE status = 'pending';
-- split
-- Pending requests to nobody yet, found when a person with that email or fiscal code activates.
CREATE INDEX single_requests_unaddressed_fiscal_code ON single_requests (subject_fiscal_code)
    WHERE status = 'pending' AND user_id IS NULL AND subject_fiscal_code IS NOT NULL;
-- split
CREATE INDEX single_requests_unaddressed_email ON single_requests (subject_email)
    WHERE status = 'pending' AND user_id IS NULL AND subject_email IS NOT NULL;
-- split

-- Erasing a company keeps its single requests: they are the people's history (their inbox, their
-- export) and the context of the audit trail's releases. The row keeps the former account's id (not
-- personal data); the company's name and VAT number go with its account, and reads show
-- "Erased company" (as group requests do since 0009).
ALTER TABLE single_requests DROP CONSTRAINT single_requests_third_party_id_fkey;
-- split

-- The key download cursors are sealed with: a cursor is a position among the person's arrivals, and
-- the gap between two plain positions would tell the company how much else the person uploaded.
INSERT INTO server_secrets (name, value)
-- gen_random_uuid() draws from pg_strong_random(): two of them give 244 random bits.
VALUES ('download_cursor_key', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));
