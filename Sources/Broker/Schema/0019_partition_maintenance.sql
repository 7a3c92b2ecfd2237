-- Partition maintenance that works, on the server's clock, and keeps the default partitions empty.
--
-- The daily maintenance of 0002 and 0015 took `int` arguments that the server bound as `bigint`, so it
-- failed at every start ("function ensure_samples_partitions(bigint, bigint) does not exist"): every month
-- past the migrations' three-month horizon would have landed in the default partitions. These replace
-- them with one function for both tables that (a) counts its months from the day the server passes (its
-- clock, not the database's, so a test can move it), and (b) gives every month that has rows in the
-- default partition a partition of its own, moving the rows (a sample from 1999, or the months the broken
-- maintenance missed). The per-month functions of 0002 and 0015 stay: they do the moving.
DROP FUNCTION ensure_samples_partitions(int, int);
-- split

DROP FUNCTION ensure_positions_partitions(int, int);
-- split

-- `parent` is 'samples' or 'positions'. Returns how many partitions it created.
CREATE FUNCTION ensure_month_partitions(parent text, today date, months_back int, months_ahead int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_created int := 0;
    v_month   int;
    v_start   date;
BEGIN
    IF parent NOT IN ('samples', 'positions') THEN
        RAISE EXCEPTION 'ensure_month_partitions: % is not a table partitioned by month', parent;
    END IF;
    FOR v_month IN -months_back .. months_ahead LOOP
        IF ensure_month_partition(parent, (date_trunc('month', today) + make_interval(months => v_month))::date) THEN
            v_created := v_created + 1;
        END IF;
    END LOOP;
    -- The default partition is where rows wait only until their month has a partition: normally empty,
    -- so this scan costs nothing.
    FOR v_start IN EXECUTE format('SELECT DISTINCT date_trunc(''month'', at)::date FROM %I', parent || '_default') LOOP
        IF ensure_month_partition(parent, v_start) THEN
            v_created := v_created + 1;
        END IF;
    END LOOP;
    RETURN v_created;
END
$$;
