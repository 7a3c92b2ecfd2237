-- Display names stored before issue 27's cleaning: stored as typed, a name could carry a bidi override
-- ("Laura" + U+202E made the bib after it read backwards) or hide a difference behind an invisible separator.
-- Cleaned here as `DisplayName.cleaned` cleans a new one: NFKC, without bidi controls (U+061C, U+200E/F,
-- U+202A–E, U+2066–9) and invisible separators (U+00AD, U+180E, U+200B, U+2060–4, U+FEFF, U+FFF9–B), trimmed;
-- joiners (ZWJ, ZWNJ) and variation selectors stay, as spelling needs them. A name left empty is none (the
-- bib alone); one NFKC lengthened past 40 code points is cut to 40 (0017's CHECK). Names that would now be
-- refused as lookalikes of a bib are kept: the bib stands beside every name, isolated from it.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

CREATE FUNCTION pg_temp.cleaned_display_name(stored text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN cleaned = '' THEN NULL ELSE left(cleaned, 40) END
    FROM (
        SELECT btrim(
            regexp_replace(
                normalize(stored, NFKC),
                '[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u00AD\u180E\u200B\u2060-\u2064\uFEFF\uFFF9-\uFFFB]', '', 'g'),
            E' \t\n\r\u000B\u000C\u0085\u00A0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A\u2028\u2029\u202F\u205F\u3000'
        ) AS cleaned
    ) AS c
$$;
-- split
UPDATE run_participants
SET display_name = pg_temp.cleaned_display_name(display_name)
WHERE display_name IS DISTINCT FROM pg_temp.cleaned_display_name(display_name);
-- split
DROP FUNCTION pg_temp.cleaned_display_name(text);
