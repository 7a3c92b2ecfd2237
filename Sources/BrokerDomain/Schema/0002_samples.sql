-- Health samples, per-person daily rollups and per-person arrival sequences.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

-- One row per measurement. `type` is `SampleType.code`; `arrival` numbers a person's stored samples
-- in the order their uploads committed, so "everything that arrived since N" is exact even for old
-- samples uploaded late. Range-partitioned by month of `at`: old months can be detached or archived.
CREATE TABLE samples (
    user_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    type    smallint NOT NULL,
    at      timestamptz NOT NULL,
    value   double precision NOT NULL,
    arrival bigint NOT NULL,
    PRIMARY KEY (user_id, type, at)
) PARTITION BY RANGE (at);
-- split

-- Rows of months without a partition land here, so no upload ever fails for lack of one.
CREATE TABLE samples_default PARTITION OF samples DEFAULT;
-- split

CREATE INDEX samples_arrival ON samples (user_id, arrival);
-- split

-- Creates the partition of the month that contains `month_start`, unless it exists. Rows of that month
-- already sitting in the default partition are moved into it first (PostgreSQL refuses to attach a
-- partition whose rows the default partition holds).
CREATE FUNCTION ensure_samples_partition(month_start date) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    v_from date := date_trunc('month', month_start)::date;
    v_to   date := (date_trunc('month', month_start) + interval '1 month')::date;
    v_name text := 'samples_' || to_char(v_from, 'YYYY_MM');
BEGIN
    IF to_regclass(v_name) IS NOT NULL THEN
        RETURN false;
    END IF;
    -- Serialise with uploads into the default partition for the few moments of the move.
    LOCK TABLE samples_default IN SHARE ROW EXCLUSIVE MODE;
    EXECUTE format('CREATE TABLE %I (LIKE samples INCLUDING DEFAULTS)', v_name);
    EXECUTE format(
        'WITH moved AS (DELETE FROM samples_default WHERE at >= %L AND at < %L RETURNING *) '
        'INSERT INTO %I SELECT * FROM moved', v_from, v_to, v_name);
    EXECUTE format('ALTER TABLE samples ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', v_name, v_from, v_to);
    RETURN true;
END
$$;
-- split

-- The server calls this at start and daily: the partitions of the recent past and the months ahead.
CREATE FUNCTION ensure_samples_partitions(months_back int, months_ahead int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_created int := 0;
    v_month int;
BEGIN
    FOR v_month IN -months_back .. months_ahead LOOP
        IF ensure_samples_partition((date_trunc('month', now()) + make_interval(months => v_month))::date) THEN
            v_created := v_created + 1;
        END IF;
    END LOOP;
    RETURN v_created;
END
$$;
-- split

SELECT ensure_samples_partitions(24, 3);
-- split

-- Per person, type and UTC day: what statistics and group requests read instead of raw samples.
-- Maintained in the same transaction as the samples it summarises.
CREATE TABLE daily_rollups (
    user_id     uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    type        smallint NOT NULL,
    day         date NOT NULL,
    count       integer NOT NULL,
    sum         double precision NOT NULL,
    sum_squares double precision NOT NULL,
    min         double precision NOT NULL,
    max         double precision NOT NULL,
    PRIMARY KEY (user_id, type, day)
);
-- split

-- Population-wide reads (peers, cohorts) go by type and day.
CREATE INDEX daily_rollups_type_day ON daily_rollups (type, day) INCLUDE (user_id, count, sum);
-- split

-- The last arrival number given to each person's samples. Taking this row's lock orders a person's
-- concurrent uploads, so arrival order is commit order.
CREATE TABLE sample_arrivals (
    user_id      uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    last_arrival bigint NOT NULL DEFAULT 0
);
-- split

-- Peer statistics select people by sex and birth date.
CREATE INDEX users_sex_birth ON users (sex, birth_date) INCLUDE (account_id);
