-- Issue 29, items 2 and 6: a single request's expiry is chosen by its sender (the `expires_at` column
-- exists since 0011; only its bound is new), and every request carries a coded purpose next to its free
-- text: a code of HL7 v3 PurposeOfUse (`PurposeOfUse`, docs/purposes.md).
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

-- Requests stored before codes existed were, nearly all, studies: they get HRESCH (healthcare research).
-- The default fills them and is dropped at once, so every new request names its code itself.
ALTER TABLE single_requests ADD COLUMN purpose_code text NOT NULL DEFAULT 'HRESCH'
    CONSTRAINT single_requests_purpose_code_check
    CHECK (purpose_code IN ('TREAT', 'ETREAT', 'CLINTRCH', 'HRESCH', 'PUBHLTH', 'PATSFTY', 'HOPERAT', 'HPAYMT', 'HMARKT', 'PATRQT'));
-- split
ALTER TABLE single_requests ALTER COLUMN purpose_code DROP DEFAULT;
-- split
ALTER TABLE group_requests ADD COLUMN purpose_code text NOT NULL DEFAULT 'HRESCH'
    CONSTRAINT group_requests_purpose_code_check
    CHECK (purpose_code IN ('TREAT', 'ETREAT', 'CLINTRCH', 'HRESCH', 'PUBHLTH', 'PATSFTY', 'HOPERAT', 'HPAYMT', 'HMARKT', 'PATRQT'));
-- split
ALTER TABLE group_requests ALTER COLUMN purpose_code DROP DEFAULT;
