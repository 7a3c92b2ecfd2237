-- GPS positions, for Track4Run (issue 19): a person's track as their phone or watch records it.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.
--
-- Plain latitude and longitude in degrees (WGS 84), no PostGIS: every question Track4Run asks (is a runner
-- within 50 m of the start, did they reach the finish, how far along the path are they) is a distance
-- between points, computed in Swift (`GeoPoint`), and `CREATE EXTENSION postgis` would need a superuser
-- that the application's own role is not.

-- One row per fix. `arrival` shares the person's sample arrival sequence (`sample_arrivals`): positions
-- and samples released by one single request are read "since arrival N" alike. Partitioned by month of
-- `at`, as samples are.
CREATE TABLE positions (
    user_id   uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    at        timestamptz NOT NULL,
    latitude  double precision NOT NULL CHECK (latitude BETWEEN -90 AND 90),
    longitude double precision NOT NULL CHECK (longitude BETWEEN -180 AND 180),
    elevation double precision,
    accuracy  double precision CHECK (accuracy >= 0),
    arrival   bigint NOT NULL,
    PRIMARY KEY (user_id, at)
) PARTITION BY RANGE (at);
-- split

-- Rows of months without a partition land here, so no upload ever fails for lack of one.
CREATE TABLE positions_default PARTITION OF positions DEFAULT;
-- split

CREATE INDEX positions_arrival ON positions (user_id, arrival);
-- split

-- Creates the partition of `parent` for the month that contains `month_start`, unless it exists, moving
-- that month's rows out of `<parent>_default` first (PostgreSQL refuses to attach a partition whose rows
-- the default partition holds). The samples' own function (0002) predates it and stays as it is.
CREATE FUNCTION ensure_month_partition(parent text, month_start date) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    v_from    date := date_trunc('month', month_start)::date;
    v_to      date := (date_trunc('month', month_start) + interval '1 month')::date;
    v_name    text := parent || '_' || to_char(v_from, 'YYYY_MM');
    v_default text := parent || '_default';
BEGIN
    IF to_regclass(v_name) IS NOT NULL THEN
        RETURN false;
    END IF;
    -- Serialise with uploads into the default partition for the few moments of the move.
    EXECUTE format('LOCK TABLE %I IN SHARE ROW EXCLUSIVE MODE', v_default);
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', v_name, parent);
    EXECUTE format(
        'WITH moved AS (DELETE FROM %I WHERE at >= %L AND at < %L RETURNING *) INSERT INTO %I SELECT * FROM moved',
        v_default, v_from, v_to, v_name);
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, v_name, v_from, v_to);
    RETURN true;
END
$$;
-- split

CREATE FUNCTION ensure_positions_partitions(months_back int, months_ahead int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_created int := 0;
    v_month int;
BEGIN
    FOR v_month IN -months_back .. months_ahead LOOP
        IF ensure_month_partition('positions', (date_trunc('month', now()) + make_interval(months => v_month))::date) THEN
            v_created := v_created + 1;
        END IF;
    END LOOP;
    RETURN v_created;
END
$$;
-- split

SELECT ensure_positions_partitions(24, 3);
