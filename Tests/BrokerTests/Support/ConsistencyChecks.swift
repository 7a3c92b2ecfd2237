/// SQL that checks a database's derived state against its source, for suites that assert it after their
/// writes (the audit chain against its events, the daily rollups against the samples).
enum ConsistencyChecks {
    /// True when every event's hash is SHA-256(previous hash ‖ canonical event) and links to its predecessor.
    static let chainIsValid = """
        SELECT bool_and(
            e.hash = sha256(e.prev_hash || audit_event_canonical(
                e.seq, e.at, e.actor_id, e.actor_role, e.action, e.request_id, e.subject, e.details))
            AND e.prev_hash = coalesce(p.hash, '\\x0000000000000000000000000000000000000000000000000000000000000000'::bytea))
        FROM audit_events e LEFT JOIN audit_events p ON p.seq = e.seq - 1
        """

    /// Rows where `daily_rollups` differs from a GROUP BY of `samples` (either side missing, or any column off).
    static let rollupMismatches = """
        WITH expected AS (
            SELECT s.user_id, s.type, sample_day(s.type, s.at, s.value, u.time_zone) AS day, count(*)::int AS count,
                   sum(s.value) AS sum, sum(s.value * s.value) AS sum_squares, min(s.value) AS min, max(s.value) AS max
            FROM samples s JOIN users u ON u.account_id = s.user_id GROUP BY 1, 2, 3
        )
        SELECT count(*) FROM expected e FULL JOIN daily_rollups r USING (user_id, type, day)
        WHERE e.count IS DISTINCT FROM r.count OR e.min IS DISTINCT FROM r.min OR e.max IS DISTINCT FROM r.max
           OR e.sum IS NULL OR r.sum IS NULL OR abs(e.sum - r.sum) > 1e-6 * greatest(1, abs(e.sum))
           OR abs(e.sum_squares - r.sum_squares) > 1e-6 * greatest(1, abs(e.sum_squares))
        """
}
