import Crypto
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// A key from `server_secrets`, created by a migration so every instance on one database derives the same
/// keyed hashes. Read once, then cached for the life of the process.
package final class ServerSecret: Sendable {
    private let client: DatabasePool
    private let name: String
    private let cached = Mutex<Data?>(nil)

    package init(_ name: String, client: DatabasePool) {
        self.name = name
        self.client = client
    }

    package func key(logger: Logger) async throws -> SymmetricKey {
        if let cached = cachedKey { return cached }
        return try await client.withConnection { try await key(on: $0, logger: logger) }
    }

    /// The key, read on `connection` if it is not cached yet: for callers already holding a connection.
    func key(on connection: PostgresConnection, logger: Logger) async throws -> SymmetricKey {
        if let cached = cachedKey { return cached }
        let rows = try await connection.query("SELECT value FROM server_secrets WHERE name = \(name)", logger: logger)
        guard let bytes = try await rows.collect().first?.decode(Data.self) else { throw ServerSecretMissing(name: name) }
        cached.withLock { $0 = bytes }
        return SymmetricKey(data: bytes)
    }

    private var cachedKey: SymmetricKey? { cached.withLock { $0 }.map { SymmetricKey(data: $0) } }
}
