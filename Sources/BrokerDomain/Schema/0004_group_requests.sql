-- Group requests: frozen cohorts, released (anonymised) results, and the cohort-similarity index.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

CREATE TABLE group_requests (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    third_party_id    uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    types             smallint[] NOT NULL CHECK (cardinality(types) > 0),
    -- [{type, min?, max?}] as the sender gave them (type by name).
    filters           jsonb NOT NULL DEFAULT '[]'::jsonb,
    age_min           integer,
    age_max           integer,
    sex               char(1) CHECK (sex IN ('F', 'M')),
    window_from       date NOT NULL,
    window_to         date NOT NULL,
    bucket            text NOT NULL CHECK (bucket IN ('day', 'week', 'month')),
    purpose           text NOT NULL,
    status            text NOT NULL CHECK (status IN ('accepted', 'refused')),
    refusal_reason    text CHECK (refusal_reason IN ('cohort_below_threshold', 'cohort_too_similar')),
    -- The frozen cohort of an accepted request: sorted, distinct `users.person_number`s. Never sent anywhere.
    cohort            int4[],
    cohort_size       integer,
    -- The same cohort as a bitmap (bit n-1 is person n): the differencing defence's symmetric difference
    -- is bit_count(a XOR b), a few microseconds per earlier cohort (sorted-array intersection: ~100).
    cohort_bits       bit varying,
    created_at        timestamptz NOT NULL DEFAULT now(),
    subscription_days integer CHECK (subscription_days BETWEEN 1 AND 3650),
    ends_at           timestamptz,
    ended_at          timestamptz
);
-- split
CREATE INDEX group_requests_sent ON group_requests (third_party_id, created_at DESC, id DESC);
-- split
CREATE INDEX group_requests_all ON group_requests (created_at DESC, id DESC);
-- split
-- The similarity check looks only at released cohorts whose size is within k of the new one's.
CREATE INDEX group_requests_released_size ON group_requests (cohort_size) WHERE status = 'accepted';
-- split

-- Every release of a group request's results, exactly as sent: the third party and the auditors read
-- the same stored cells.
CREATE TABLE group_releases (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    request_id  uuid NOT NULL REFERENCES group_requests (id) ON DELETE CASCADE,
    released_at timestamptz NOT NULL DEFAULT now(),
    -- [{bucketStart, type, people, mean, p10, p50, p90, suppressed}]
    cells       jsonb NOT NULL
);
-- split
CREATE INDEX group_releases_request ON group_releases (request_id, id DESC);
