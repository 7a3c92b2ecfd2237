-- Differential privacy (issue 16): every released figure about people is noisy and debits a ledger.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

-- Each release now holds only the cells it adds: a released cell is never recomputed. Releases stored
-- before this migration were whole snapshots of exact figures; they stay readable as such.
ALTER TABLE group_releases ADD COLUMN snapshot boolean NOT NULL DEFAULT false;
-- split
UPDATE group_releases SET snapshot = true;
-- split
-- What the release cost (millionths of ρ, zero-concentrated DP).
ALTER TABLE group_releases ADD COLUMN loss_micro bigint NOT NULL DEFAULT 0;
-- split
-- What one cell of this request costs, chosen at creation (NULL for requests from before this migration).
ALTER TABLE group_requests ADD COLUMN cell_loss_micro bigint;
-- split
-- The last bucket start a subscription has released: later buckets are released once, after they close.
ALTER TABLE group_requests ADD COLUMN released_through date;
-- split
-- Erasing a company keeps its group requests and their releases for the auditors: the request keeps the
-- former account's id (not personal data), and the company's name and VAT number go with its account.
ALTER TABLE group_requests DROP CONSTRAINT group_requests_third_party_id_fkey;
-- split

-- Every debit of privacy loss, written in the same transaction as what it pays for. Companies' entries
-- are kept after the company's erasure (no foreign key): auditors see every release's cost.
CREATE TABLE privacy_ledger (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          timestamptz NOT NULL DEFAULT now(),
    -- NULL for peer statistics, which no company receives.
    company_id  uuid,
    request_id  uuid,
    kind        text NOT NULL CHECK (kind IN ('cohort', 'release', 'peer_statistics')),
    -- Cells released (a cohort size counts as one); never how many people: that is a figure about people.
    cells       integer NOT NULL CHECK (cells >= 0),
    loss_micro  bigint NOT NULL CHECK (loss_micro >= 0)
);
-- split
CREATE INDEX privacy_ledger_company ON privacy_ledger (company_id, at) WHERE company_id IS NOT NULL;
-- split
CREATE INDEX privacy_ledger_recent ON privacy_ledger (at DESC, id DESC);
-- split

-- Each person's loss from group releases, per calendar month (their cap covers the last twelve). Keyed
-- by person number, which is never reused, so an erased person's rows only age out.
CREATE TABLE privacy_person_loss (
    person_number int4 NOT NULL,
    month         date NOT NULL,
    loss_micro    bigint NOT NULL CHECK (loss_micro >= 0),
    PRIMARY KEY (person_number, month)
);
-- split

-- Peer statistics: one noisy cell per sex, ten-year age band (by age on the day), type and closed local
-- day, computed once by the privacy module and composed into every person's page.
CREATE TABLE peer_cells (
    sex          char(1) NOT NULL CHECK (sex IN ('F', 'M')),
    age_from     smallint NOT NULL,
    type         smallint NOT NULL,
    day          date NOT NULL,
    -- Noisy figures: the count, the centred sum (resolution units) and the histogram bins.
    people       bigint NOT NULL,
    centred_sum  bigint NOT NULL,
    bins         bigint[] NOT NULL,
    loss_micro   bigint NOT NULL,
    computed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (sex, age_from, type, day)
);
-- split
-- Which closed days have had their peer cells published (all bands and types at once).
CREATE TABLE peer_days (
    day          date PRIMARY KEY,
    computed_at  timestamptz NOT NULL DEFAULT now()
);
