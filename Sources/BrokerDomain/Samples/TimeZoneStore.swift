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
        // The person row, then the arrival row: the order everything that takes both follows. NOWAIT: a
        // second change of the same person's zone while one rebuilds answers 503 at once instead of holding
        // a pooled connection for the length of the rebuild.
        guard case .some(let current) = try await zone(of: userID, locking: true, on: connection, logger: logger),
            current != identifier, !(onlyIfUnknown && current != nil)
        else { return false }
        // Foundation accepted the name; the rollups are computed by PostgreSQL, whose list may differ (older
        // tzdata, or a name it reads as a fixed-offset abbreviation first). A name it does not know as a zone is
        // refused here rather than failing every later upload.
        guard try await knownToDatabase(identifier, on: connection, logger: logger) else { throw UnknownZone(identifier: identifier) }
        _ = try await SampleStore.lockArrivals(of: userID, on: connection, logger: logger)
        try await connection.query("UPDATE users SET time_zone = \(identifier) WHERE account_id = \(userID)", logger: logger)
        try await LongStatements.allow(on: connection, logger: logger)
        try await connection.query("SELECT rebuild_daily_rollups(\(userID))", logger: logger)
        return true
    }

    /// A device's zone (a phone's upload, an export's HKTimeZone) becomes the person's while they have none.
    /// A name this database does not know is logged and left: it never costs the person their data.
    static func adoptIfUnknown(_ identifier: String, for userID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        do {
            _ = try await setTimeZone(identifier, for: userID, onlyIfUnknown: true, on: connection, logger: logger)
        } catch let unknown as UnknownZone {
            logger.warning("device time zone unknown to the database", metadata: ["zone": "\(unknown.identifier)"])
        }
    }

    /// A zone name PostgreSQL does not know as a zone (it would fail, or read it as a fixed offset).
    struct UnknownZone: Error {
        var identifier: String
    }

    /// Locks the person's row for the rest of the transaction, before their arrival row: what an import
    /// does first, so that adopting the export's zone at its end keeps the order person, then arrivals.
    static func lockPerson(_ userID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT 1 FROM users WHERE account_id = \(userID) FOR NO KEY UPDATE", logger: logger)
    }

    private static func knownToDatabase(_ identifier: String, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        // UTC is also an abbreviation, of the same zero offset.
        if identifier == "UTC" { return true }
        return try await connection.query(
            """
            SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = \(identifier))
               AND NOT EXISTS (SELECT 1 FROM pg_timezone_abbrevs WHERE abbrev = \(identifier))
            """, logger: logger
        ).collect().first?.decode(Bool.self) ?? false
    }

    /// nil: no such person; .some(nil): a person whose zone is not known.
    private static func zone(of userID: UUID, locking: Bool, on connection: PostgresConnection, logger: Logger)
        async throws -> String??
    {
        let lock = locking ? "FOR NO KEY UPDATE NOWAIT" : ""
        guard
            let row = try await connection.query(
                "SELECT time_zone FROM users WHERE account_id = \(userID) \(unescaped: lock)", logger: logger
            ).collect().first
        else { return nil }
        return .some(try row.decode(String?.self))
    }
}
