import ArgumentParser
import BrokerDomain
import BrokerServer
import CommandLineSupport
import Foundation

struct Audit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the audit log, and sign checkpoints of it.", subcommands: [Verify.self, Checkpoint.self, Keygen.self])

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recompute the audit log's hash chain; exit 1 with the first broken sequence number if it does not verify.",
            discussion: """
                With --checkpoint, also check the log against a checkpoint downloaded earlier (GET \
                /v1/audit/checkpoints/latest): its signature against the pinned --public-key, then that the log \
                still holds at least that many events and that they still hash to the signed head. That catches \
                a truncated or rewritten log, however consistent the chain left behind.
                """)

        @OptionGroup var database: DatabaseOptions
        @Option(help: "A checkpoint file (JSON) downloaded earlier.") var checkpoint: String?
        @Option(help: "The signing key's Ed25519 public key (base64, or a file holding it), as pinned when first downloaded.")
        var publicKey: String?

        func run() async throws {
            let logger = makeLogger(level: .warning)
            guard let path = checkpoint else {
                let result = try await withDatabase(url: try database.resolved(), logger: logger) { client in
                    try await AuditTrail(client: client).verify(logger: logger)
                }
                switch result {
                case .valid(let events, let lastHash):
                    print("The audit log verifies: \(events) events, last hash \(lastHash).")
                case .broken(let seq):
                    fail(
                        "The audit log is broken at sequence number \(seq): its hash, its link to the previous event or its numbering does not verify."
                    )
                }
                return
            }
            guard let publicKey else { throw ValidationError("--checkpoint needs --public-key: the key the checkpoint must be signed with") }
            let key: AuditSigningKey.PublicKey
            let checkpoint: AuditCheckpoint
            do {
                key = try AuditSigningKey.publicKey(from: publicKey)
                checkpoint = try AuditCheckpoint.read(file: path)
            } catch { fail("\(error)") }
            guard checkpoint.isSigned(by: key) else {
                fail(
                    "The checkpoint's signature does not verify against the public key (key \(AuditSigningKey.keyID(of: key)); the checkpoint names key \(checkpoint.keyId)): it was not signed by that key, or was edited after signing."
                )
            }
            let result = try await withDatabase(url: try database.resolved(), logger: logger) { client in
                try await AuditTrail(client: client).verify(against: checkpoint, logger: logger)
            }
            switch result {
            case .consistent(let events, let lastHash):
                print(
                    "The audit log verifies and is consistent with the checkpoint of \(checkpoint.logSize) events signed at \(checkpoint.signedAt): \(events) events, last hash \(lastHash)."
                )
            case .truncated(let size, let events):
                fail(
                    "The audit log was truncated: the checkpoint signed at \(checkpoint.signedAt) covers \(size) events, the log now has \(events) events."
                )
            case .rewritten(let size):
                fail(
                    "The audit log was rewritten: its first \(size) events no longer hash to the head signed at \(checkpoint.signedAt) (\(checkpoint.headHash))."
                )
            case .broken(let seq):
                fail("The audit log is broken at sequence number \(seq): its hash, its link to the previous event or its numbering does not verify.")
            }
        }
    }

    struct Checkpoint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify the audit log and sign a checkpoint of it now, with AUDIT_SIGNING_KEY_FILE; prints it (or writes --output).")

        @OptionGroup var database: DatabaseOptions
        @Option(help: "The signing key file (default: $AUDIT_SIGNING_KEY_FILE).") var signingKeyFile: String?
        @Option(help: "Write the checkpoint here instead of standard output.") var output: String?

        func run() async throws {
            let logger = makeLogger(level: .warning)
            guard let keyFile = signingKeyFile ?? ProcessInfo.processInfo.environment["AUDIT_SIGNING_KEY_FILE"] else {
                throw ValidationError("set AUDIT_SIGNING_KEY_FILE or pass --signing-key-file")
            }
            let key: AuditSigningKey
            do { key = try AuditSigningKey.read(file: keyFile) } catch { fail("\(error)") }
            let checkpoint: AuditCheckpoint?
            do {
                checkpoint = try await withDatabase(url: try database.resolved(), logger: logger) { client in
                    try await AuditCheckpoints(client: client, trail: AuditTrail(client: client), key: key).publish(always: true, logger: logger)
                }
            } catch let error as AuditCheckpointError { fail("\(error)") }
            guard let checkpoint else { fail("no checkpoint was signed") }
            if let output {
                try checkpoint.fileData.write(to: URL(fileURLWithPath: output))
                print("Signed a checkpoint of \(checkpoint.logSize) events into \(output).")
            } else {
                print(String(decoding: checkpoint.fileData, as: UTF8.self))
            }
        }
    }

    struct Keygen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an Ed25519 audit signing key file (for AUDIT_SIGNING_KEY_FILE); prints its public key for auditors to pin.")

        @Argument(help: "Where to write the key (created readable by its owner only; never overwritten).") var file: String

        func run() async throws {
            let key = AuditSigningKey.generate()
            writeNewKeyFile(file, key.fileText)
            print("public key: \(key.publicKeyText)")
            print("key id: \(key.keyID)")
        }
    }
}
