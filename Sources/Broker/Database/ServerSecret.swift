import Crypto
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// A key from `server_secrets`, created by a migration so every instance on one database derives the same
/// keyed hashes. Read once, then cached for the life of the process.
final class ServerSecret: Sendable {
    private let client: PostgresClient
    private let name: String
    private let cached = Mutex<Data?>(nil)

    init(_ name: String, client: PostgresClient) {
        self.name = name
        self.client = client
    }

    func key(logger: Logger) async throws -> SymmetricKey {
        if let bytes = cached.withLock({ $0 }) { return SymmetricKey(data: bytes) }
        let rows = try await client.query("SELECT value FROM server_secrets WHERE name = \(name)", logger: logger)
        guard let bytes = try await rows.collect().first?.decode(Data.self) else { throw ServerSecretMissing(name: name) }
        cached.withLock { $0 = bytes }
        return SymmetricKey(data: bytes)
    }
}

/// The migrations that create the secret have not run on this database.
struct ServerSecretMissing: Error, CustomStringConvertible {
    let name: String
    var description: String { "server secret '\(name)' is missing: run `d4h migrate`" }
}
