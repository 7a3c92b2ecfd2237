-- Peer statistics by calendar month (issue 32): one noisy cell per sex, ten-year age band (by age on the
-- month's first day), type and closed month, computed once by the privacy module and read by every
-- person's page. A cell holds a noisy count and p10, p50 and p90 drawn by the exponential mechanism; no
-- mean (its sum's noise could not meet the accuracy targets at a peer cell's loss), so no sum or histogram.
CREATE TABLE peer_month_cells (
    sex          char(1) NOT NULL CHECK (sex IN ('F', 'M')),
    age_from     smallint NOT NULL,
    type         smallint NOT NULL,
    month        date NOT NULL CHECK (extract(day FROM month) = 1),
    people       bigint NOT NULL,
    p10          float8 NOT NULL,
    p50          float8 NOT NULL,
    p90          float8 NOT NULL,
    loss_micro   bigint NOT NULL CHECK (loss_micro > 0),
    computed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (sex, age_from, type, month)
);
-- split
-- Which closed months have had their peer cells published (all bands and types at once).
CREATE TABLE peer_months (
    month        date PRIMARY KEY CHECK (extract(day FROM month) = 1),
    computed_at  timestamptz NOT NULL DEFAULT now()
);
-- split
-- The daily cells are superseded: their figures were too noisy to show (a daily median off by tens of
-- beats per minute). The `peer_statistics` ledger entries that paid for them stay: what was spent was spent.
DROP TABLE peer_cells;
-- split
DROP TABLE peer_days;
