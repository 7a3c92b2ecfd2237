-- Partition maintenance that works, on the server's clock.
--
-- The daily maintenance of 0002 and 0015 took `int` arguments that the server bound as `bigint`, so it
-- failed at every start ("function ensure_samples_partitions(bigint, bigint) does not exist"): every month
-- past the migrations' three-month horizon would have landed in the default partitions. These replace
-- them with one function for both tables that counts its months from the day the server passes (its
-- clock, not the database's, so a test can move it). Creating a month's partition moves that month's rows
-- out of the default partition (the per-month functions of 0002 and 0015, kept), so the months a broken or
-- stopped maintenance missed are emptied out of it by the next pass.
--
-- Months outside the window (a reading dated 1999) stay in the default partition, by design: a person may
-- upload readings back to 1900, and a partition for every month found there would let one person create
-- some 1,500 partitions per table, which every query not pruned by time would then have to visit.
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
BEGIN
    IF parent NOT IN ('samples', 'positions') THEN
        RAISE EXCEPTION 'ensure_month_partitions: % is not a table partitioned by month', parent;
    END IF;
    FOR v_month IN -months_back .. months_ahead LOOP
        IF ensure_month_partition(parent, (date_trunc('month', today) + make_interval(months => v_month))::date) THEN
            v_created := v_created + 1;
        END IF;
    END LOOP;
    RETURN v_created;
END
$$;
