-- Issue 30, item 4: every account speaks a language (the console's pages and its mails), chosen at
-- registration from the browser's or client's `Accept-Language` and changed in the profile. On `accounts`,
-- not `users`: companies and auditors read pages and mails too. Accounts from before are English, which
-- is what they were shown until now.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

ALTER TABLE accounts ADD COLUMN language text NOT NULL DEFAULT 'en' CHECK (language IN ('en', 'it'));
