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
        // A phone names its zone on every upload: once one is known, adopting costs this read and no lock.
        if onlyIfUnknown, try await zone(of: userID, locking: false, on: connection, logger: logger) != .some(nil) { return false }
        // The person row, then the arrival row: the order everything that takes both follows.
        guard case .some(let current) = try await zone(of: userID, locking: true, on: connection, logger: logger),
            current != identifier, !(onlyIfUnknown && current != nil)
        else { return false }
        try await connection.query(
            "INSERT INTO sample_arrivals (user_id) VALUES (\(userID)) ON CONFLICT DO NOTHING", logger: logger)
        try await connection.query("SELECT 1 FROM sample_arrivals WHERE user_id = \(userID) FOR UPDATE", logger: logger)
        try await connection.query("UPDATE users SET time_zone = \(identifier) WHERE account_id = \(userID)", logger: logger)
        try await LongStatements.allow(on: connection, logger: logger)
        try await connection.query("SELECT rebuild_daily_rollups(\(userID))", logger: logger)
        return true
    }

    /// nil: no such person; .some(nil): a person whose zone is not known.
    private static func zone(of userID: UUID, locking: Bool, on connection: PostgresConnection, logger: Logger)
        async throws -> String??
    {
        let lock = locking ? "FOR NO KEY UPDATE" : ""
        guard let row = try await connection.query(
            "SELECT time_zone FROM users WHERE account_id = \(userID) \(unescaped: lock)", logger: logger
        ).collect().first else { return nil }
        return .some(try row.decode(String?.self))
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
