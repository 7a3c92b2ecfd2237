import Foundation
import Logging

/// The rules of positions: only people upload and read them, every batch is validated whole, and it is
/// stored in one statement (`PositionStore.ingestAlone`) or else one transaction (`PositionStore.ingest`).
package struct PositionService: Sendable {
    let client: DatabasePool
    /// How far ahead of now a position may be.
    let clock: WallClock

    package init(client: DatabasePool, clock: WallClock = .system) {
        self.client = client
        self.clock = clock
    }

    package func upload(_ entries: [PositionBatch.Entry], by principal: Principal, logger: Logger) async throws
        -> (accepted: Int, duplicates: Int)
    {
        guard principal.role == .user else { throw SampleError.notAUser }
        let positions = try PositionBatch.validate(entries, now: clock.now).get()
        // A runner's fix a second: one statement alone when it can finish so (`PositionStore.ingestAlone`).
        if let stored = try await client.withConnection({
            try await PositionStore.ingestAlone(positions, for: principal.accountID, on: $0, logger: logger)
        }) {
            return stored
        }
        return try await client.withTransaction(logger: logger) { connection in
            try await PositionStore.ingest(positions, for: principal.accountID, on: connection, logger: logger)
        }
    }

    /// A page of the caller's positions in time order; `cursor` is the `next` of the page before.
    package func list(_ principal: Principal, from: String?, to: String?, page: PageRequest, logger: Logger) async throws -> Page<Position> {
        guard principal.role == .user else { throw SampleError.notAUser }
        var errors: [FieldError] = []
        func time(_ text: String?, _ field: String) -> Date? {
            guard let text else { return nil }
            if let date = Timestamp.parse(text) { return date }
            errors.append(FieldError(field: field, message: "must be an RFC 3339 time such as 2026-03-01T08:00:00Z"))
            return nil
        }
        let from = time(from, "from")
        let to = time(to, "to")
        let (limit, after) = page.read({ $0.key.flatMap { $0.key == "p" ? $0.time : nil } }, into: &errors)
        guard errors.isEmpty else { throw SampleError.invalid(errors) }
        let (positions, next) = try await client.withConnection { connection in
            try await PositionStore.list(
                userID: principal.accountID, from: from, to: to, after: after, limit: limit, on: connection, logger: logger)
        }
        return Page(items: positions, next: next.map { PageCursor(PageKey(time: $0, key: "p")) })
    }
}
