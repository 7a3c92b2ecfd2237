-- Sharing preferences (issue 29, item 3): the sample types a person never shares with any company. A type
-- listed here is never granted, never downloaded (every download statement leaves it out, so a change
-- reaches even a download already streaming at its next chunk), never announced by a subscription's
-- webhook, and contributes to no group cohort's filter, no group cell and no peer cell. No row: shared, so
-- every existing person shares everything as before. Only sample types (`SampleType.code`, as in
-- `samples.type`); Track4Run's positions are not covered. Gone with the account.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

-- `since`: when the person stopped sharing the type (kept when they say so again), for their own page.
-- The primary key is the index every download's and cohort's anti-join probes: (person, type).
CREATE TABLE unshared_types (
    user_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    type    smallint NOT NULL,
    since   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, type)
);
