-- Partition maintenance that works, one month at a time, safe with several instances.
--
-- The daily maintenance of 0002 and 0015 took `int` arguments that the server bound as `bigint`, so it
-- failed at every start ("function ensure_samples_partitions(bigint, bigint) does not exist"): every month
-- past the migrations' three-month horizon would have landed in the default partitions. The server now
-- counts the months itself, from its own clock, and calls the per-month function once a month, each call
-- its own transaction: a month that fails (a lock not had in time) leaves the others done, and no pass
-- holds a lock for the whole window.
--
-- Months outside the window (a reading dated 1999) stay in the default partition, by design: a person may
-- upload readings back to 1900, and a partition for every month found there would let one person create
-- some 1,500 partitions per table, which every query not pruned by time would then have to visit.
DROP FUNCTION ensure_samples_partitions(int, int);
-- split

DROP FUNCTION ensure_positions_partitions(int, int);
-- split

-- Creates the partition of `parent` ('samples' or 'positions') for the month that contains `month_start`,
-- unless it exists, moving that month's rows out of `<parent>_default` first. Returns whether it created it.
--
-- Instances serialise on an advisory lock per table and the existence check is made again under it (two
-- instances starting together both saw the month missing, and the second failed on "already exists").
-- The default partition keeps every row older than the window, so it can be large: attaching a partition
-- normally scans it whole under an ACCESS EXCLUSIVE lock, which blocks every reader of the table for the
-- scan. A CHECK constraint excluding the month, validated first under a lock that blocks no reader, proves
-- the default holds none of its rows, so the attach itself does not scan.
CREATE OR REPLACE FUNCTION ensure_month_partition(parent text, month_start date) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    v_from    date := date_trunc('month', month_start)::date;
    v_to      date := (date_trunc('month', month_start) + interval '1 month')::date;
    v_name    text := parent || '_' || to_char(v_from, 'YYYY_MM');
    v_default text := parent || '_default';
    v_check   text := parent || '_default_not_' || to_char(v_from, 'YYYY_MM');
BEGIN
    IF parent NOT IN ('samples', 'positions') THEN
        RAISE EXCEPTION 'ensure_month_partition: % is not a table partitioned by month', parent;
    END IF;
    IF to_regclass(v_name) IS NOT NULL THEN
        RETURN false;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('data4help.month_partitions'), hashtext(parent));
    IF to_regclass(v_name) IS NOT NULL THEN
        RETURN false;
    END IF;
    -- Serialise with uploads into the default partition for the moments of the move (readers go on).
    EXECUTE format('LOCK TABLE %I IN SHARE ROW EXCLUSIVE MODE', v_default);
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', v_name, parent);
    EXECUTE format(
        'WITH moved AS (DELETE FROM %I WHERE at >= %L AND at < %L RETURNING *) INSERT INTO %I SELECT * FROM moved',
        v_default, v_from, v_to, v_name);
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (NOT (at >= %L AND at < %L)) NOT VALID', v_default, v_check, v_from, v_to);
    EXECUTE format('ALTER TABLE %I VALIDATE CONSTRAINT %I', v_default, v_check);
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, v_name, v_from, v_to);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', v_default, v_check);
    RETURN true;
END
$$;
-- split

-- The samples' own function (0002), kept for the synthetic population and older callers, now the same as
-- the one above.
CREATE OR REPLACE FUNCTION ensure_samples_partition(month_start date) RETURNS boolean LANGUAGE sql AS $$
    SELECT ensure_month_partition('samples', month_start)
$$;
