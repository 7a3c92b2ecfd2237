import Logging
import PostgresNIO

/// The counter every withdrawal of consent moves (migration 0051): a block, a type no longer shared, an
/// account that left. Read on a standby before a group evaluation's reads and on the primary under the
/// ledger lock; a difference means the standby's cohort may count someone who has since said no.
enum ConsentVersionStore {
    static func version(on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        let rows = try await connection.query("SELECT version FROM consent_version", logger: logger).collect()
        return try rows.first?.decode(Int64.self) ?? 0
    }
}
