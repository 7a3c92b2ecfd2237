import Crypto
import Foundation

/// A signed statement of the audit log's state, modelled on Certificate Transparency's signed tree heads:
/// "after `logSize` events the chain's hash was `headHash`", signed at `signedAt` by key `keyId`. An auditor
/// keeps the checkpoints they download; any later log that is shorter, or whose first `logSize` events
/// no longer hash to `headHash`, was truncated or rewritten, and no one without the key can sign a new
/// checkpoint to cover that up. It names no person: a count, a hash, a time, a key.
///
/// The file is this JSON object; the signature (Ed25519, base64) covers `signedText`: the lines
/// `d4h-audit-checkpoint/v1`, logSize, headHash, signedAt and keyId, each ending in a line feed.
package struct AuditCheckpoint: Codable, Sendable, Equatable {
    package static let currentFormat = "d4h-audit-checkpoint/v1"

    package var format: String
    package var logSize: Int64
    /// The hash of event `logSize` (64 zeros for an empty log), lower-case hex.
    package var headHash: String
    /// RFC 3339, UTC, milliseconds.
    package var signedAt: String
    package var keyId: String
    package var signature: String

    package init(format: String = Self.currentFormat, logSize: Int64, headHash: String, signedAt: String, keyId: String, signature: String) {
        (self.format, self.logSize, self.headHash, self.signedAt, self.keyId, self.signature) =
            (format, logSize, headHash, signedAt, keyId, signature)
    }

    /// Exactly the bytes the signature covers: every field but the signature, in a fixed order.
    package var signedText: [UInt8] { Array("\(format)\n\(logSize)\n\(headHash)\n\(signedAt)\n\(keyId)\n".utf8) }

    package static func sign(logSize: Int64, headHash: String, at time: Date, with key: AuditSigningKey) throws -> AuditCheckpoint {
        var checkpoint = AuditCheckpoint(logSize: logSize, headHash: headHash, signedAt: Timestamp.rfc3339(time), keyId: key.keyID, signature: "")
        checkpoint.signature = try key.sign(checkpoint.signedText).base64EncodedString()
        return checkpoint
    }

    /// True only for this format, signed by `publicKey` over these very fields.
    package func isSigned(by publicKey: Curve25519.Signing.PublicKey) -> Bool {
        guard format == Self.currentFormat, keyId == AuditSigningKey.keyID(of: publicKey),
            let signature = Data(base64Encoded: signature)
        else { return false }
        return publicKey.isValidSignature(signature, for: signedText)
    }

    /// The file as auditors keep it (pretty, keys sorted).
    package var fileData: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }

    package static func read(file path: String) throws -> AuditCheckpoint {
        guard let data = FileManager.default.contents(atPath: path) else { throw AuditCheckpointError.unreadable(path) }
        do {
            return try JSONDecoder().decode(AuditCheckpoint.self, from: data)
        } catch {
            throw AuditCheckpointError.malformed(path)
        }
    }
}
