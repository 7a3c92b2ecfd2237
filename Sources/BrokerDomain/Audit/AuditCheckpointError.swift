import Foundation

package enum AuditCheckpointError: Error, CustomStringConvertible {
    case badPublicKey
    case unreadable(String)
    case malformed(String)
    /// The chain does not verify from the last checkpoint: the publisher signs nothing.
    case chainDoesNotVerify(Int64)
    case notConfigured

    package var description: String {
        switch self {
        case .badPublicKey: "the public key is not an Ed25519 public key (32 bytes in base64, or a file holding that)"
        case .unreadable(let path): "cannot read the checkpoint file \(path)"
        case .malformed(let path): "\(path) is not an audit checkpoint (a JSON object with format, logSize, headHash, signedAt, keyId and signature)"
        case .chainDoesNotVerify(let seq):
            "refusing to sign a checkpoint: the audit log does not verify at sequence number \(seq) (run `d4h audit verify`)"
        case .notConfigured: "no audit signing key is configured (AUDIT_SIGNING_KEY_FILE)"
        }
    }
}
