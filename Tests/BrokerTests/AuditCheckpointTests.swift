import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Signed checkpoints: published by the server, downloaded by auditors, checked by `d4h audit verify`.
@Suite("Audit checkpoints")
struct AuditCheckpointTests {
    /// A server that signs checkpoints with a key of its own (test servers sign none by default).
    static func signing(_ configuration: inout BrokerConfiguration) { configuration.auditSigningKey = AuditSigningKey.generate() }

    static func frequent(_ configuration: inout BrokerConfiguration) {
        signing(&configuration)
        configuration.auditCheckpointInterval = .milliseconds(200)
    }

    /// Waits (at most 30 s) for the newest checkpoint to cover `size` events.
    static func checkpoint(covering size: Int, _ harness: TestHarness, auditor: String) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let response = try await harness.request(.get, "/v1/audit/checkpoints/latest", token: auditor)
            if response.status == .ok, let latest = try? harness.object(response), latest["logSize"] as? Int == size { return latest }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestSetupError("no checkpoint of \(size) events within 30 s")
    }

    @Test("the server signs checkpoints as the log grows; auditors download them and the key, and d4h verifies them")
    func publishedAndDownloaded() async throws {
        try await TestHarness.run(configure: Self.frequent) { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            let company = try await harness.activeCompany()
            let auditor = try await harness.activeAuditor()
            let latest = try await Self.checkpoint(covering: 4, harness, auditor: auditor)
            #expect(Set(latest.keys) == ["format", "logSize", "headHash", "signedAt", "keyId", "signature"])
            #expect(latest["format"] as? String == "d4h-audit-checkpoint/v1")
            let head = try await harness.sql("SELECT encode(hash, 'hex') FROM audit_events WHERE seq = 4").first?.decode(String.self)
            #expect(latest["headHash"] as? String == head)

            let key = try harness.object(try await harness.request(.get, "/v1/audit/signing-key", token: auditor))
            #expect(key["algorithm"] as? String == "Ed25519")
            #expect(key["keyId"] as? String == latest["keyId"] as? String)
            let publicKey = try #require(key["publicKey"] as? String)

            let page = try harness.object(try await harness.request(.get, "/v1/audit/checkpoints?limit=1", token: auditor))
            #expect((page["items"] as? [[String: Any]])?.first?["logSize"] as? Int == 4)
            let next = try #require(page["nextCursor"] as? String)
            let older = try harness.object(try await harness.request(.get, "/v1/audit/checkpoints?cursor=\(next)", token: auditor))
            let sizes = try #require((older["items"] as? [[String: Any]])?.compactMap { $0["logSize"] as? Int })
            #expect(!sizes.isEmpty && sizes.allSatisfy { $0 < 4 } && sizes == sizes.sorted(by: >))

            // Nothing about a person in any checkpoint.
            let all = harness.text(try await harness.request(.get, "/v1/audit/checkpoints", token: auditor))
            for identity in [person.email, person.fiscalCode, person.fullName] { #expect(!all.contains(identity)) }

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-checkpoint-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: file) }
            let download = try await harness.request(.get, "/v1/audit/checkpoints/latest", token: auditor)
            try Data(harness.text(download).utf8).write(to: file)
            let verified = try await D4HCommand.run(
                ["audit", "verify", "--checkpoint", file.path, "--public-key", publicKey], environment: ["DATABASE_URL": harness.databaseURL.text])
            #expect(verified.status == 0, "\(verified.output)")
            #expect(verified.output.contains("consistent with the checkpoint of 4 events"), "\(verified.output)")

            // Auditors only.
            #expect(try await harness.request(.get, "/v1/audit/checkpoints/latest", token: company).status == .forbidden)
            #expect(try await harness.request(.get, "/v1/audit/signing-key", token: company).status == .forbidden)
            #expect(try await harness.request(.get, "/v1/audit/checkpoints?cursor=x", token: auditor).status == .unprocessableContent)
        }
    }

    @Test("verification while the log grows sees a consistent prefix: always valid, never a half-appended head")
    func verificationDuringAppends() async throws {
        try await TestHarness.run { harness in
            let auditor = try await harness.activeAuditor()
            let results = try await withThrowingTaskGroup(of: [Bool].self) { group in
                for index in 0..<6 {
                    group.addTask {
                        let person = TestHarness.Person(
                            email: "grow\(index).\(UUID().uuidString.prefix(6).lowercased())@example.com", fiscalCode: TestHarness.uniqueFiscalCode())
                        _ = try await harness.requestOnNewConnection(.post, "/v1/users", json: person.registrationJSON)
                        return []
                    }
                }
                group.addTask {
                    var valid: [Bool] = []
                    for _ in 0..<6 {
                        let response = try await harness.requestOnNewConnection(.get, "/v1/audit/verification", token: auditor)
                        let body = try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any]
                        valid.append(body?["valid"] as? Bool == true)
                    }
                    return valid
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(results == Array(repeating: true, count: 6))
            #expect(try await harness.int("SELECT count(*) FROM audit_events") == 6)
        }
    }

    @Test("the console's verification page shows the newest checkpoint and the key, and downloads the checkpoint file")
    func consoleDownload() async throws {
        try await TestHarness.run(configure: Self.signing) { harness in
            let token = try await harness.activeAuditor()
            // Signed at start, over the empty log.
            let latest = try await Self.checkpoint(covering: 0, harness, auditor: token)
            let email = try #require(try await harness.sql("SELECT email FROM accounts WHERE role = 'auditor'").first?.decode(String.self))
            let browser = ConsoleBrowser(harness)
            _ = try await browser.logIn(email, "auditor-password-1")
            #expect(try await browser.get("/audit/verification").status == .ok)
            #expect(browser.lastPage.contains(#"href="/audit/checkpoint.json""#))
            let key = try harness.object(try await harness.request(.get, "/v1/audit/signing-key", token: token))
            #expect(browser.lastPage.contains(try #require(key["publicKey"] as? String)))
            let file = try await browser.get("/audit/checkpoint.json")
            #expect(file.status == .ok)
            #expect(file.headers[.contentDisposition] == #"attachment; filename="audit-checkpoint-0.json""#)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(browser.lastPage.utf8)) as? [String: Any])
            #expect(json["signature"] as? String == latest["signature"] as? String)
        }
    }

    @Test("no checkpoint is signed over a chain that does not verify")
    func brokenChainIsNotSigned() async throws {
        let key = try await AuditFixtures.signingKey()
        defer { try? FileManager.default.removeItem(at: key.file) }
        try await TestHarness.run { harness in
            try await harness.activeUser()
            _ = try await harness.sql("ALTER TABLE audit_events DISABLE TRIGGER USER")
            _ = try await harness.sql("UPDATE audit_events SET action = 'account.erased' WHERE seq = 1")
            let run = try await D4HCommand.run(
                ["audit", "checkpoint"], environment: ["DATABASE_URL": harness.databaseURL.text, "AUDIT_SIGNING_KEY_FILE": key.file.path])
            #expect(run.status != 0)
            #expect(run.output.contains("refusing to sign"), "\(run.output)")
        }
    }

    @Test("`d4h serve` refuses to start when AUDIT_SIGNING_KEY_FILE is unreadable or not a key", arguments: [false, true])
    func badKeyFileStopsTheServer(exists: Bool) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-bad-\(UUID().uuidString).key")
        defer { try? FileManager.default.removeItem(at: file) }
        if exists { try Data("not a key\n".utf8).write(to: file) }
        try await TestDatabase.withMigratedDatabase { url in
            let run = try await D4HCommand.run(
                ["serve", "--http-port", "0"],
                environment: ["DATABASE_URL": url.text, "MAIL_TRANSPORT": "log", "AUDIT_SIGNING_KEY_FILE": file.path])
            #expect(run.status != 0)
            #expect(run.output.contains("AUDIT_SIGNING_KEY_FILE"), "\(run.output)")
        }
    }

    @Test("a key file round-trips, and a checkpoint verifies only under its own key and fields")
    func signingRoundTrip() throws {
        let key = AuditSigningKey.generate()
        let other = AuditSigningKey.generate()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-\(UUID().uuidString).key")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(key.fileText.utf8).write(to: file)
        #expect(try AuditSigningKey.read(file: file.path).publicKeyText == key.publicKeyText)
        let checkpoint = try AuditCheckpoint.sign(logSize: 7, headHash: String(repeating: "ab", count: 32), at: Date(), with: key)
        #expect(checkpoint.isSigned(by: key.publicKey))
        #expect(!checkpoint.isSigned(by: other.publicKey))
        var moved = checkpoint
        moved.headHash = String(repeating: "cd", count: 32)
        #expect(!moved.isSigned(by: key.publicKey))
    }
}
