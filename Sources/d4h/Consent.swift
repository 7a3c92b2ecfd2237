import ArgumentParser
import BrokerDomain
import CommandLineSupport
import Foundation

struct Consent: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check signed consent receipts offline, and make the key that signs them.", subcommands: [Verify.self, Keygen.self])

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a consent receipt offline: its signature against a public key you hold, then its claims.",
            discussion: """
                RECEIPT is the receipt itself (a compact JWS) or a file holding it (the console's .jwt download). \
                The key is the server's JWK set, saved once from GET /v1/consent-receipts/keys (--jwks FILE), or \
                its Ed25519 public key in base64 (--public-key). Prints the claims and "valid" (exit 0), or why the \
                receipt does not verify (exit 1): changed after signing, signed by another key, or not a receipt.
                """)

        @Argument(help: "The receipt (a compact JWS), or a file holding it.") var receipt: String
        @Option(help: "A JWK set file, as GET /v1/consent-receipts/keys serves it.") var jwks: String?
        @Option(help: "The signing key's Ed25519 public key: base64 of its 32 bytes, or a file holding that.") var publicKey: String?
        @Option(help: "Also require this issuer (the server's public URL, the receipt's iss).") var issuer: String?

        func run() async throws {
            let keys: [ConsentSigningKey.PublicKey]
            do {
                switch (jwks, publicKey) {
                case (let file?, nil):
                    keys = try ConsentSigningKey.publicKeys(fromJWKS: try Self.contents(of: file))
                case (nil, let text?):
                    let given = FileManager.default.fileExists(atPath: text) ? String(decoding: try Self.contents(of: text), as: UTF8.self) : text
                    keys = [try ConsentSigningKey.publicKey(fromText: given)]
                default:
                    throw ValidationError("give exactly one of --jwks FILE or --public-key KEY: the key the receipt must be signed with")
                }
            } catch let error as ConsentReceiptInvalid { fail("\(error)") }
            var text = receipt
            if FileManager.default.fileExists(atPath: receipt) {
                do { text = String(decoding: try Self.contents(of: receipt), as: UTF8.self) } catch { fail("\(error)") }
            }
            let claims: ConsentReceiptClaims
            do { claims = try ConsentReceiptJWS.verify(text, trusting: keys, issuer: issuer) } catch { fail("invalid: \(error)") }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(claims), as: UTF8.self))
            print("valid: signed by key \(Self.keyID(of: text)), \(claims.status.rawValue) at \(claims.statusAt)")
        }

        /// A file's bytes, or a failure naming it (a receipt or key file is small; more is not one).
        static func contents(of path: String) throws -> Data {
            guard let handle = FileHandle(forReadingAtPath: path) else { throw ValidationError("cannot read \(path)") }
            defer { try? handle.close() }
            return try handle.read(upToCount: 1 << 20) ?? Data()
        }

        /// The `kid` of a receipt that verified (its header was checked).
        static func keyID(of jws: String) -> String {
            let header = jws.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").first.flatMap { Base64URL.decode($0) }
            let object = header.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            return object?["kid"] as? String ?? "?"
        }
    }

    struct Keygen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an Ed25519 consent receipt signing key file (for CONSENT_SIGNING_KEY_FILE); prints its public key and key id.")

        @Argument(help: "Where to write the key (created readable by its owner only; never overwritten).") var file: String

        func run() async throws {
            let key = ConsentSigningKey.generate()
            writeNewKeyFile(file, key.fileText)
            print("public key: \(key.publicKey.rawRepresentation.base64EncodedString())")
            print("key id: \(key.keyID)")
        }
    }
}
