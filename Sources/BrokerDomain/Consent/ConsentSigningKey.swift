import Crypto
import Foundation

/// The Ed25519 key that signs consent receipts. Like the audit key (`AuditSigningKey`) it lives in a file
/// outside the database (`CONSENT_SIGNING_KEY_FILE`: the 32-byte private key in base64 on one line, as
/// `d4h consent keygen` writes it), so whoever holds only the database cannot issue a receipt. It is a key
/// of its own: a receipt is shown to companies and people, a checkpoint to auditors, and neither kind of
/// signature can then pass for the other, nor can one key be rotated without the other.
package struct ConsentSigningKey: Sendable {
    package typealias PublicKey = Curve25519.Signing.PublicKey

    private let file: Ed25519KeyFile

    var privateKey: Curve25519.Signing.PrivateKey { file.privateKey }

    package init(privateKey: Curve25519.Signing.PrivateKey) { self.file = Ed25519KeyFile(privateKey: privateKey) }

    package static func generate() -> ConsentSigningKey { ConsentSigningKey(privateKey: .init()) }

    package var publicKey: PublicKey { privateKey.publicKey }

    /// The key's `kid`: its RFC 7638 JWK thumbprint, so anyone can recompute it from the public key alone.
    package var keyID: String { Self.keyID(of: publicKey) }

    /// What `d4h consent keygen` writes.
    package var fileText: String { file.fileText }

    func sign(_ bytes: some DataProtocol) throws -> Data { try privateKey.signature(for: bytes) }

    /// The RFC 7638 thumbprint of an OKP key: SHA-256 of its required members in lexical order, base64url.
    package static func keyID(of key: PublicKey) -> String {
        let members = #"{"crv":"Ed25519","kty":"OKP","x":"\#(Base64URL.encode(key.rawRepresentation))"}"#
        return Base64URL.encode(Data(SHA256.hash(data: Data(members.utf8))))
    }

    /// The public key as a JSON Web Key (RFC 8037), as the key set at `/v1/consent-receipts/keys` lists it.
    package var jwk: JWK { JWK(publicKey) }

    /// One public key of a JWK set (RFC 7517, RFC 8037 §2: `kty` OKP, `crv` Ed25519).
    package struct JWK: Codable, Sendable, Equatable {
        package var kty: String
        package var crv: String
        package var x: String
        package var kid: String
        package var use: String?
        package var alg: String?

        package init(_ key: PublicKey) {
            (kty, crv, x) = ("OKP", "Ed25519", Base64URL.encode(key.rawRepresentation))
            (kid, use, alg) = (ConsentSigningKey.keyID(of: key), "sig", "EdDSA")
        }

        /// The key, when this is an Ed25519 signing key whose `kid` is its thumbprint; nil otherwise.
        package var publicKey: PublicKey? {
            guard kty == "OKP", crv == "Ed25519", use == nil || use == "sig", alg == nil || alg == "EdDSA",
                let bytes = Base64URL.decode(x), bytes.count == 32, let key = try? PublicKey(rawRepresentation: bytes),
                ConsentSigningKey.keyID(of: key) == kid
            else { return nil }
            return key
        }
    }

    /// A JWK set as served: `{"keys": [...]}`.
    package struct JWKSet: Codable, Sendable, Equatable {
        package var keys: [JWK]

        package init(keys: [JWK]) { self.keys = keys }
    }

    /// The Ed25519 keys of a JWK set document; keys of other kinds are skipped, as RFC 7517 §5 says.
    package static func publicKeys(fromJWKS data: Data) throws(ConsentReceiptInvalid) -> [PublicKey] {
        guard let set = try? JSONDecoder().decode(JWKSet.self, from: data) else { throw .badKey("not a JWK set ({\"keys\": [...]})") }
        let keys = set.keys.compactMap(\.publicKey)
        guard !keys.isEmpty else { throw .badKey("the JWK set holds no Ed25519 key (kty OKP, crv Ed25519) whose kid is its thumbprint") }
        return keys
    }

    /// A public key given as base64 (or base64url) of its 32 raw bytes.
    package static func publicKey(fromText text: String) throws(ConsentReceiptInvalid) -> PublicKey {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let raw = Data(base64Encoded: trimmed) ?? Base64URL.decode(trimmed), raw.count == 32,
            let key = try? PublicKey(rawRepresentation: raw)
        else { throw .badKey("not an Ed25519 public key (32 bytes in base64)") }
        return key
    }

    /// Reads the key file (`Ed25519KeyFile`): one that is missing or not a key stops the server or the command.
    package static func read(file path: String) throws -> ConsentSigningKey {
        ConsentSigningKey(
            privateKey: try Ed25519KeyFile.read(file: path, variable: "CONSENT_SIGNING_KEY_FILE", keygen: "d4h consent keygen").privateKey)
    }
}
