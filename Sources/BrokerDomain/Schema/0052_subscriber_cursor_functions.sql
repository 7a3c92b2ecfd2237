-- Issue 33: a phone's upload statement (SampleStore.IngestAlone, PositionStore.ingestAlone) names, for each live
-- subscriber it announces new data to, the last arrival of that subscriber's data before the upload: a
-- max(arrival) over every monthly partition of samples (or positions). PostgreSQL sets up the whole plan of a
-- statement before running it, so every upload built those per-partition scans, about a third of the
-- statement's time, although almost no upload has a live subscriber. In a function, the query is planned and
-- set up only when it is called: once per subscriber announced to.
--
-- STABLE: the query reads the calling statement's snapshot, exactly as the subquery it replaces did (the
-- upload's own rows are not in it). The filters are the subscription's: its types less the person's unshared
-- ones, its window.
CREATE FUNCTION subscriber_samples_arrival(
    p_user uuid, p_before bigint, p_types smallint[], p_from timestamptz, p_to timestamptz
) RETURNS bigint LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN coalesce((
        SELECT max(s.arrival) FROM samples s
        WHERE s.user_id = p_user AND s.arrival <= p_before AND s.type = ANY(p_types)
          AND s.type <> ALL(ARRAY(SELECT u.type FROM unshared_types u WHERE u.user_id = p_user))
          AND (p_from IS NULL OR s.at >= p_from)
          AND (p_to IS NULL OR s.at <= p_to)), 0);
END
$$;
-- split

CREATE FUNCTION subscriber_positions_arrival(
    p_user uuid, p_before bigint, p_from timestamptz, p_to timestamptz
) RETURNS bigint LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN coalesce((
        SELECT max(p.arrival) FROM positions p
        WHERE p.user_id = p_user AND p.arrival <= p_before
          AND (p_from IS NULL OR p.at >= p_from)
          AND (p_to IS NULL OR p.at <= p_to)), 0);
END
$$;
