-- Issue 29, item 2: at its expiry a request the sender is shown as pending becomes `expired`, and the
-- sender's webhook says so (`single_request.expired`). It is sent alike for a request nobody answered,
-- one that reached nobody and one the person refused (which reads pending to the sender until then), so
-- the event tells the sender nothing the status did not.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

ALTER TABLE single_requests ADD COLUMN lapse_announced boolean NOT NULL DEFAULT false;
-- split
-- Requests that lapsed before this migration were never promised an event: none is sent for them.
UPDATE single_requests SET lapse_announced = true WHERE expires_at <= now();
-- split
CREATE INDEX single_requests_unannounced_lapse ON single_requests (expires_at)
    WHERE NOT lapse_announced
      AND (status IN ('pending', 'expired') OR (status = 'refused' AND refusal_unseen AND withdrawn_at IS NULL));
-- split

-- A person's data revision: every correction and every change of sharing preferences adds one, in its
-- own transaction. A download that read a chunk ahead while the previous one was being sent checks it
-- before sending, and reads the chunk again if the person's data changed meanwhile. A table of its own,
-- not a column of `sample_arrivals`: uploads hold that row for their whole transaction (an import for its
-- whole length), and a change of preferences must not wait for them.
CREATE TABLE data_revisions (
    user_id  uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    revision bigint NOT NULL DEFAULT 0
);
