-- Days are the person's own: a rollup's `day` is the local date, in the person's time zone, on which a
-- sample counts (docs/sample-types.md). Until a person's time zone is known their days stay UTC days, so
-- existing rollups keep their meaning; only sleep moves (to the day the sleep ends), rebuilt below.

-- An IANA name (Europe/Rome), set from the profile, the phone or an Apple Health export; NULL: not known.
ALTER TABLE users ADD COLUMN time_zone text;
-- split

-- The local date a sample counts for. A sleeping_hours sample (type 9) is a period that began at `at`
-- and lasted `value` hours; a watch writes a night as many such stages, some ending before midnight. A
-- day's sleep is what ends between 18:00 the evening before and 18:00 that day, so every stage of one
-- night counts for the morning the person wakes up (and an afternoon nap for its own day): the local date
-- of the end plus six hours. Every other sample counts for the day it was taken. Used by ingest and by
-- every rollup rebuild, so the rule lives in one place; `SampleType.code` 9 is on disk and never changes.
CREATE FUNCTION sample_day(type smallint, at timestamptz, value double precision, zone text)
RETURNS date LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT (CASE WHEN type = 9 THEN at + value * interval '1 hour' + interval '6 hours' ELSE at END
            AT TIME ZONE coalesce(zone, 'UTC'))::date
$$;
-- split

-- Recomputes one person's rollups from their samples (after their time zone changed). The caller holds
-- the person's `sample_arrivals` row lock, so no upload of theirs interleaves.
CREATE FUNCTION rebuild_daily_rollups(person uuid) RETURNS void LANGUAGE sql AS $$
    DELETE FROM daily_rollups WHERE user_id = person;
    INSERT INTO daily_rollups (user_id, type, day, count, sum, sum_squares, min, max)
    SELECT s.user_id, s.type, sample_day(s.type, s.at, s.value, u.time_zone),
           count(*), sum(s.value), sum(s.value * s.value), min(s.value), max(s.value)
    FROM samples s JOIN users u ON u.account_id = s.user_id
    WHERE s.user_id = person
    GROUP BY s.user_id, s.type, 3;
$$;
-- split

-- Sleep already stored counted for the day it began: move it to the wake-up day.
DELETE FROM daily_rollups WHERE type = 9;
-- split

INSERT INTO daily_rollups (user_id, type, day, count, sum, sum_squares, min, max)
SELECT s.user_id, s.type, sample_day(s.type, s.at, s.value, u.time_zone),
       count(*), sum(s.value), sum(s.value * s.value), min(s.value), max(s.value)
FROM samples s JOIN users u ON u.account_id = s.user_id
WHERE s.type = 9
GROUP BY s.user_id, s.type, 3;
