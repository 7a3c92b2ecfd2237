import Foundation
import Logging
import PostgresNIO

/// The person's time zone, on which the days of their rollups depend: changing it recomputes their rollups
/// in the same transaction, under the same row lock uploads take, so no upload lands on a half-moved day.
enum TimeZoneStore {
    /// Sets the person's zone (when `onlyIfUnknown`, only if none is set yet) and, when it changed, rebuilds
    /// their rollups on the new days. Returns whether it changed. Run on the caller's transaction; the
    /// rebuild reads all of the person's samples, so the transaction gets the longer statement bound.
    static func setTimeZone(
        _ identifier: String, for userID: UUID, onlyIfUnknown: Bool, on connection: PostgresConnection, logger: Logger
    ) async throws -> Bool {
        try await connection.query(
            "INSERT INTO sample_arrivals (user_id) VALUES (\(userID)) ON CONFLICT DO NOTHING", logger: logger)
        try await connection.query(
            "SELECT 1 FROM sample_arrivals WHERE user_id = \(userID) FOR UPDATE", logger: logger)
        let changed = try await connection.query(
            """
            UPDATE users SET time_zone = \(identifier)
            WHERE account_id = \(userID) AND time_zone IS DISTINCT FROM \(identifier)
              AND (NOT \(onlyIfUnknown) OR time_zone IS NULL)
            RETURNING 1
            """, logger: logger
        ).collect().count > 0
        if changed {
            try await LongStatements.allow(on: connection, logger: logger)
            try await connection.query("SELECT rebuild_daily_rollups(\(userID))", logger: logger)
        }
        return changed
    }
}

/// IANA time zone names as people's profiles hold them.
public enum TimeZoneName {
    /// Canonical IANA names only (Europe/Rome, America/New_York, UTC): an abbreviation (CET) or an offset
    /// (+01:00) has no daylight-saving rules, so it would put a summer evening on the wrong day.
    public static func isValid(_ identifier: String) -> Bool {
        identifier == "UTC" || known.contains(identifier)
    }

    private static let known = Set(TimeZone.knownTimeZoneIdentifiers)

    public static let message = "must be an IANA time zone name such as Europe/Rome"
}
