import Crypto
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Turns an account id into a stable pseudonym: HMAC-SHA256 under a server secret kept in the database,
/// so the audit log can follow one person without ever naming them, and erasure leaves nothing linkable.
public final class Pseudonymizer: Sendable {
    private let client: PostgresClient
    private let cachedKey = Mutex<Data?>(nil)

    public init(client: PostgresClient) { self.client = client }

    public func pseudonym(for accountID: UUID, logger: Logger) async throws -> String {
        let key = try await key(logger: logger)
        let code = HMAC<SHA256>.authenticationCode(for: Data(accountID.uuidString.lowercased().utf8), using: key)
        return "p_" + code.prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    private func key(logger: Logger) async throws -> SymmetricKey {
        if let bytes = cachedKey.withLock({ $0 }) { return SymmetricKey(data: bytes) }
        let rows = try await client.query(
            "SELECT value FROM server_secrets WHERE name = 'audit_pseudonym_key'", logger: logger)
        guard let bytes = try await rows.collect().first?.decode(Data.self) else {
            throw PseudonymizerError.keyMissing
        }
        cachedKey.withLock { $0 = bytes }
        return SymmetricKey(data: bytes)
    }
}

enum PseudonymizerError: Error { case keyMissing }
