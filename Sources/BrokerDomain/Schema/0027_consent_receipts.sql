-- Issue 29, item 5: signed consent receipts. Every grant and every end of one (a stop by either side, a
-- block, the person's erasure, an expiry; not the company's own erasure) is recorded as a compact JWS
-- signed with Ed25519 by a key kept outside the database (`CONSENT_SIGNING_KEY_FILE`), so the person and
-- the company hold the same proof of what was agreed, which neither the other side nor whoever holds the
-- database can rewrite.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

-- `jws` is the receipt itself; the other columns are what lists and checks find it by, copied from its
-- claims. `user_id` goes (SET NULL) with the person's account: an erased person's receipts are no longer
-- theirs to list, and nothing left here links them to anyone. The company keeps what it received: its
-- request's receipts name the person only by a pseudonym made for that request. `third_party_id` has no
-- foreign key, as `single_requests.third_party_id` has none since 0011: a company's erasure leaves the
-- people's history, receipts included.
CREATE TABLE consent_receipts (
    id             uuid PRIMARY KEY,
    request_id     uuid NOT NULL REFERENCES single_requests (id),
    grant_id       uuid NOT NULL,
    user_id        uuid REFERENCES accounts (id) ON DELETE SET NULL,
    third_party_id uuid NOT NULL,
    status         text NOT NULL CHECK (status IN ('granted', 'revoked', 'expired')),
    issued_at      timestamptz NOT NULL,
    jws            text NOT NULL
);
-- split
-- The person's receipts, newest first.
CREATE INDEX consent_receipts_person ON consent_receipts (user_id, issued_at DESC, id DESC) WHERE user_id IS NOT NULL;
-- split
-- One request's receipts, oldest first (its grant, then its end).
CREATE INDEX consent_receipts_request ON consent_receipts (request_id, issued_at, id);
-- split

-- The key of the person's pseudonym in receipts: HMAC of the account id and the request's id, so each
-- request gets a pseudonym of its own that joins with no other request's, no other company's and not
-- the auditors' (`audit_pseudonym_key`).
INSERT INTO server_secrets (name, value)
-- gen_random_uuid() draws from pg_strong_random(): two of them give 244 random bits.
VALUES ('consent_pseudonym_key', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));
