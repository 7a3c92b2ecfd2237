-- Corrections (issue 29, item 4): a person deletes samples of theirs (one, a time range of one type, or
-- every one of a type). Their access log records each correction beside the releases of their data, so
-- the log that says who received what also says what the person took back, and when.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

-- A correction names no company and no request: those columns become optional, for corrections only.
ALTER TABLE access_log DROP CONSTRAINT access_log_kind_check;
-- split
ALTER TABLE access_log
    ALTER COLUMN third_party_id DROP NOT NULL,
    ALTER COLUMN company_name DROP NOT NULL,
    ALTER COLUMN request_id DROP NOT NULL,
    -- The deleted range of a correction, inclusive; NULL is open on that side (both NULL: every sample of
    -- the type). `types` holds the one type, `samples` how many were deleted; never a value.
    ADD COLUMN corrected_from timestamptz,
    ADD COLUMN corrected_to timestamptz,
    ADD CONSTRAINT access_log_kind_check CHECK (kind IN ('single', 'group', 'correction')),
    -- A release still names its company and request; only a correction has a range.
    ADD CONSTRAINT access_log_kind_columns CHECK (
        CASE WHEN kind = 'correction'
             THEN third_party_id IS NULL AND company_name IS NULL AND request_id IS NULL
             ELSE third_party_id IS NOT NULL AND company_name IS NOT NULL AND request_id IS NOT NULL
                  AND corrected_from IS NULL AND corrected_to IS NULL
        END);
