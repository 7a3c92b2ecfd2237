import Crypto
import Foundation

/// An Ed25519 private key kept in a file outside the database, so whoever holds only the database cannot
/// sign with it: the 32 raw bytes in base64 on one line, as `d4h audit keygen` and `d4h consent keygen`
/// write them. The audit key (`AuditSigningKey`) and the consent key (`ConsentSigningKey`) are each one.
package struct Ed25519KeyFile: Sendable {
    /// The private key's 32 raw bytes (CryptoKit's key type is not `Sendable`; its bytes are).
    private let raw: Data

    package init(privateKey: Curve25519.Signing.PrivateKey) { self.raw = privateKey.rawRepresentation }

    package static func generate() -> Ed25519KeyFile { Ed25519KeyFile(privateKey: .init()) }

    package var privateKey: Curve25519.Signing.PrivateKey {
        // Only ever made from a valid key's own bytes (`init`), so this cannot fail.
        try! Curve25519.Signing.PrivateKey(rawRepresentation: raw)
    }

    package var publicKey: Curve25519.Signing.PublicKey { privateKey.publicKey }

    /// What the keygen commands write.
    package var fileText: String { raw.base64EncodedString() + "\n" }

    /// Reads the key file named by the setting `variable`; a file that is missing, unreadable or not a key
    /// stops the server (or the command) with a message naming the variable and the command that makes one,
    /// rather than running without signatures.
    package static func read(file path: String, variable: String, keygen: String) throws -> Ed25519KeyFile {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError.invalid(variable, "cannot be read: \(path) (\(error.localizedDescription))")
        }
        guard let raw = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), raw.count == 32,
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: raw)
        else {
            throw ConfigurationError.invalid(
                variable, "does not hold an Ed25519 private key (32 bytes in base64, as `\(keygen)` writes): \(path)")
        }
        return Ed25519KeyFile(privateKey: key)
    }
}
