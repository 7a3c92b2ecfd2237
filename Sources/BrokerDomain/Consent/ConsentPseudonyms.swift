import Crypto
import Foundation
import Logging
import PostgresNIO

/// The person as a company's receipts and FHIR Consent name them: HMAC-SHA256 of the account id and the
/// company's id under a server secret (`consent_pseudonym_key`). Stable across the company's requests, so
/// it can tell its receipts about one person apart from another's; different for every company, so two
/// companies cannot join their receipts; and unlike the email or fiscal code the company typed, it says
/// nothing the company did not already know. It is not the auditors' pseudonym (`Pseudonymizer`), which a
/// company must never hold: with it, the company could find the person in the audit log.
package struct ConsentPseudonyms: Sendable {
    package static let prefix = "s_"
    private let secret: ServerSecret

    package init(client: DatabasePool) { self.secret = ServerSecret("consent_pseudonym_key", client: client) }

    func pseudonym(of userID: UUID, for thirdPartyID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> String {
        let key = try await secret.key(on: connection, logger: logger)
        let message = "\(userID.uuidString.lowercased()) \(thirdPartyID.uuidString.lowercased())"
        let code = HMAC<SHA256>.authenticationCode(for: Data(message.utf8), using: key)
        return Self.prefix + code.prefix(16).map { String(format: "%02x", $0) }.joined()
    }
}
