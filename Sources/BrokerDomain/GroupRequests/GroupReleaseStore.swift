import Foundation
import Logging
import PostgresNIO

/// The SQL of group releases: the cells each release added, stored once and never changed.
enum GroupReleaseStore {
    /// Stores the cells a release adds; they are never changed afterwards.
    static func storeRelease(_ cells: [GroupResultCell], of requestID: UUID, loss: PrivacyLoss, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        let json = String(decoding: try JSONEncoder().encode(cells), as: UTF8.self)
        try await connection.query(
            "INSERT INTO group_releases (request_id, cells, loss_micro) VALUES (\(requestID), \(json)::jsonb, \(loss.micro))", logger: logger)
    }

    static func setReleasedThrough(_ bucket: CalendarDate, of requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "UPDATE group_requests SET released_through = \(bucket.description)::date WHERE id = \(requestID)", logger: logger)
    }

    /// Every cell released so far, by bucket and type, as of the latest release; nil before the first.
    /// Releases from before differential privacy were whole snapshots (`snapshot`): the latest of them is
    /// the base, and later releases only add cells.
    static func releasedCells(of requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> GroupRelease? {
        let rows = try await connection.query(
            "SELECT released_at, snapshot, cells::text FROM group_releases WHERE request_id = \(requestID) ORDER BY id", logger: logger)
        var latest: Date?
        var cells: [String: GroupResultCell] = [:]
        for try await (at, snapshot, json) in rows.decode((Date, Bool, String).self) {
            latest = at
            if snapshot { cells = [:] }
            for cell in try JSONDecoder().decode([GroupResultCell].self, from: Data(json.utf8)) {
                cells["\(cell.bucketStart) \(cell.type.code)"] = cells["\(cell.bucketStart) \(cell.type.code)"] ?? cell
            }
        }
        guard let latest else { return nil }
        return GroupRelease(releasedAt: latest, cells: cells.values.sorted { ($0.bucketStart, $0.type.code) < ($1.bucketStart, $1.type.code) })
    }
}
