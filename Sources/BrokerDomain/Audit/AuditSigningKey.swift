import Crypto
import Foundation

/// The Ed25519 key that signs audit checkpoints. It lives in a file outside the database
/// (`AUDIT_SIGNING_KEY_FILE`: the 32-byte private key in base64 on one line, as `d4h audit keygen` writes
/// it), so whoever holds only the database cannot sign a checkpoint for a log they have rewritten.
package struct AuditSigningKey: Sendable {
    package typealias PublicKey = Curve25519.Signing.PublicKey

    private let file: Ed25519KeyFile

    var privateKey: Curve25519.Signing.PrivateKey { file.privateKey }

    package init(privateKey: Curve25519.Signing.PrivateKey) { self.file = Ed25519KeyFile(privateKey: privateKey) }

    package static func generate() -> AuditSigningKey { AuditSigningKey(privateKey: .init()) }

    package var publicKey: Curve25519.Signing.PublicKey { privateKey.publicKey }

    /// The public key as auditors pin it: base64 of its 32 raw bytes.
    package var publicKeyText: String { Self.text(of: publicKey) }

    /// Names the key in every checkpoint it signs: the first 8 bytes of SHA-256 of the public key, in hex.
    package var keyID: String { Self.keyID(of: publicKey) }

    /// What `d4h audit keygen` writes.
    package var fileText: String { file.fileText }

    package func sign(_ bytes: [UInt8]) throws -> Data { try privateKey.signature(for: bytes) }

    package static func text(of key: Curve25519.Signing.PublicKey) -> String { key.rawRepresentation.base64EncodedString() }

    package static func keyID(of key: Curve25519.Signing.PublicKey) -> String {
        Array(SHA256.hash(data: key.rawRepresentation).prefix(8)).hexText
    }

    /// Reads the key file (`Ed25519KeyFile`): one that is missing or not a key stops the server or the command.
    package static func read(file path: String) throws -> AuditSigningKey {
        AuditSigningKey(privateKey: try Ed25519KeyFile.read(file: path, variable: "AUDIT_SIGNING_KEY_FILE", keygen: "d4h audit keygen").privateKey)
    }

    /// An auditor's pinned public key: base64 of 32 bytes, given as is or as the path of a file holding it.
    package static func publicKey(from argument: String) throws -> Curve25519.Signing.PublicKey {
        var text = argument
        if FileManager.default.fileExists(atPath: argument) {
            text = try String(contentsOfFile: argument, encoding: .utf8)
        }
        guard let raw = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), raw.count == 32,
            let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw)
        else { throw AuditCheckpointError.badPublicKey }
        return key
    }
}
