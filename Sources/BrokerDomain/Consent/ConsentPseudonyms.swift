import Crypto
import Foundation
import Logging
import PostgresNIO

/// The person as a company's receipts and FHIR Consent name them: HMAC-SHA256 of the account id and the
/// request's id under a server secret (`consent_pseudonym_key`). The same in every receipt of one request
/// (its grant and its end), so both sides hold one document about one person; different for every request,
/// so it tells the company nothing it did not already know: not that the email of one request and the
/// fiscal code of another are one person, nor that a runner of one run ran another (runs name runners by
/// bib only), and no two companies can join their receipts. It is not the auditors' pseudonym (`Pseudonymizer`), which a
/// company must never hold: with it, the company could find the person in the audit log.
package struct ConsentPseudonyms: Sendable {
    package static let prefix = "s_"
    private let secret: ServerSecret

    package init(client: DatabasePool) { self.secret = ServerSecret("consent_pseudonym_key", client: client) }

    func pseudonym(of userID: UUID, in requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> String {
        let key = try await secret.key(on: connection, logger: logger)
        let message = "\(userID.uuidString.lowercased()) \(requestID.uuidString.lowercased())"
        let code = HMAC<SHA256>.authenticationCode(for: Data(message.utf8), using: key)
        return Self.prefix + code.prefix(16).map { String(format: "%02x", $0) }.joined()
    }
}
