import Crypto
import Foundation
import Logging
import PostgresNIO

/// Turns an account id into a stable pseudonym: HMAC-SHA256 under a server secret kept in the database,
/// so the audit log can follow one person without ever naming them, and erasure leaves nothing linkable.
package final class Pseudonymizer: Sendable {
    private let secret: ServerSecret

    package init(client: DatabasePool) { self.secret = ServerSecret("audit_pseudonym_key", client: client) }

    package func pseudonym(for accountID: UUID, logger: Logger) async throws -> String {
        Self.pseudonym(for: accountID, key: try await secret.key(logger: logger))
    }

    /// The same, for a caller that holds `connection` (it must not ask the pool for another).
    package func pseudonym(for accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> String {
        Self.pseudonym(for: accountID, key: try await secret.key(on: connection, logger: logger))
    }

    private static func pseudonym(for accountID: UUID, key: SymmetricKey) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data(accountID.uuidString.lowercased().utf8), using: key)
        return "p_" + code.prefix(16).map { String(format: "%02x", $0) }.joined()
    }
}
