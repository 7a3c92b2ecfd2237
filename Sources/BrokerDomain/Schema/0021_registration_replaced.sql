-- Pre-hijacking (issue 27, item 7): a registration for an email that is not yet activated replaces the
-- pending one (its password, identity and links) instead of re-sending that one's mail. Someone who
-- registered a victim's address first with their own password can then no longer have the victim
-- activate the squatter's account.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

-- True for an account whose registration replaced an earlier pending one of the same email. Two people
-- may have registered that address, and the mail goes to its owner whichever registered last; so the
-- activation of such an account asks for the password it was registered with, and whoever follows the
-- link activates only a registration whose password they know.
ALTER TABLE accounts ADD COLUMN registration_replaced boolean NOT NULL DEFAULT false;
