-- Bibs are never given twice in a run (issue 19): a runner who leaves does not hand their number to the
-- next one, so the organiser's webhooks (by bib) never mix up two people.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

ALTER TABLE runs ADD COLUMN bibs_issued integer NOT NULL DEFAULT 0;
-- split
UPDATE runs r SET bibs_issued = coalesce((SELECT max(bib) FROM run_participants p WHERE p.run_id = r.id), 0);
