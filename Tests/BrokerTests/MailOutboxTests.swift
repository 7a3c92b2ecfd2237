import BrokerDomain
import BrokerTestSupport
import Foundation
import Logging
import PostgresNIO
import Synchronization
import Testing

/// The outbox's delivery rules, on the real database with transports that misbehave on purpose: a mail
/// is written only with its event, a hung or failing transport holds nothing but its own attempt, a mail
/// is retried and then dead-lettered, and a crash between the send and its record resends the same message.
@Suite("Mail outbox", .serialized)
struct MailOutboxTests {
    let logger = Logger(label: "mail-outbox-tests")

    /// A transport that answers as told: never (hangs), with an error, or by keeping the mail.
    final class Transport: Mailer {
        enum Behaviour {
            case hang
            case fail(permanent: Bool)
            case keep
        }
        let behaviour: Mutex<Behaviour>
        let kept = Mutex<[OutgoingMail]>([])
        let attempts = Mutex(0)
        init(_ behaviour: Behaviour) { self.behaviour = Mutex(behaviour) }

        func send(_ mail: OutgoingMail) async throws {
            attempts.withLock { $0 += 1 }
            switch behaviour.withLock({ $0 }) {
            case .hang: try await Task.sleep(for: .seconds(3600))
            case .fail(let permanent): throw MailDeliveryError(.rejected, permanent: permanent, "refused by the test")
            case .keep: kept.withLock { $0.append(mail) }
            }
        }
    }

    private func withOutbox(_ body: @escaping @Sendable (DatabasePool, MailOutbox) async throws -> Void) async throws {
        try await TestDatabase.withMigratedDatabase { url in
            try await TestDatabase.withClient(url) { client in
                try await body(client, MailOutbox(client: client, publicURL: "http://127.0.0.1:8080"))
            }
        }
    }

    private func enqueue(_ outbox: MailOutbox, _ client: DatabasePool, to: String = "someone@example.com") async throws -> UUID {
        let mail = OutgoingMail(to: to, subject: "Hello", body: "Activation token: d4ha_secret")
        try await client.withConnection { try await outbox.enqueue(mail, kind: .activation, accountID: nil, on: $0, logger: logger) }
        return mail.messageID
    }

    private func row(_ client: DatabasePool) async throws -> (status: String, attempts: Int, body: String?, error: String?) {
        try await client.withConnection { connection in
            let rows = try await connection.query("SELECT status, attempts, body, last_error FROM mail_outbox", logger: logger)
            for try await (status, attempts, body, error) in rows.decode((String, Int32, String?, String?).self) {
                return (status, Int(attempts), body, error)
            }
            throw AccountStoreError.noRow
        }
    }

    private func configuration(_ change: (inout MailDeliveryConfiguration) -> Void = { _ in }) -> MailDeliveryConfiguration {
        var configuration = MailDeliveryConfiguration()
        configuration.sendTimeout = .milliseconds(500)
        configuration.lease = .seconds(2)
        configuration.backoffBase = .milliseconds(1)
        configuration.backoffCap = .milliseconds(1)
        change(&configuration)
        return configuration
    }

    @Test("a rolled-back event writes no mail; a committed one writes exactly one")
    func mailOnlyWithItsEvent() async throws {
        try await withOutbox { client, outbox in
            struct Rollback: Error {}
            await #expect(throws: (any Error).self) {
                try await client.withTransaction(logger: logger) { connection in
                    try await outbox.enqueue(
                        OutgoingMail(to: "a@example.com", subject: "s", body: "b"), kind: .activation, accountID: nil, on: connection,
                        logger: logger)
                    throw Rollback()
                }
            }
            #expect(try await outbox.counts(logger: logger)["pending"] == 0)
            _ = try await enqueue(outbox, client)
            #expect(try await outbox.counts(logger: logger)["pending"] == 1)
        }
    }

    @Test("a hung transport costs one bounded attempt: the batch returns, the mail is kept and retried")
    func hungTransport() async throws {
        try await withOutbox { client, outbox in
            _ = try await enqueue(outbox, client)
            let hung = Transport(.hang)
            let delivery = MailDelivery(client: client, mailer: hung, configuration: configuration(), logger: logger)
            let start = ContinuousClock.now
            try await delivery.deliverBatch()
            #expect(ContinuousClock.now - start < .seconds(5), "the wait for the transport is bounded")
            let after = try await row(client)
            #expect(after.status == "pending" && after.attempts == 1)
            #expect(after.error?.contains("no answer") == true)
            #expect(after.body != nil, "kept for the retry")
        }
    }

    @Test("a failing transport: retried with backoff, dead after the last attempt (body dropped); permanent: dead at once")
    func retriesThenDeadLetter() async throws {
        try await withOutbox { client, outbox in
            _ = try await enqueue(outbox, client)
            let failing = Transport(.fail(permanent: false))
            let delivery = MailDelivery(client: client, mailer: failing, configuration: configuration { $0.maxAttempts = 3 }, logger: logger)
            for _ in 0..<3 {
                try await Task.sleep(for: .milliseconds(20))
                try await delivery.deliverBatch()
            }
            let dead = try await row(client)
            #expect(dead.status == "dead" && dead.attempts == 3 && dead.body == nil)
            #expect(try await outbox.counts(logger: logger)["dead"] == 1)
            #expect(failing.attempts.withLock { $0 } == 3)
        }
        try await withOutbox { client, outbox in
            _ = try await enqueue(outbox, client)
            let refusing = Transport(.fail(permanent: true))
            let delivery = MailDelivery(client: client, mailer: refusing, configuration: configuration(), logger: logger)
            try await delivery.deliverBatch()
            #expect(try await row(client).status == "dead")
        }
    }

    @Test("a crash between the send and its record: the mail is sent again after the lease, with the same Message-ID")
    func crashBetweenSendAndRecord() async throws {
        try await withOutbox { client, outbox in
            let messageID = try await enqueue(outbox, client)
            // The crashed instance claimed the mail (and, say, sent it) but never recorded the outcome.
            _ = try await client.withConnection { connection in
                try await connection.query(
                    "UPDATE mail_outbox SET attempts = 1, next_attempt_at = now() + interval '1 second'", logger: logger)
            }
            let keeping = Transport(.keep)
            let delivery = MailDelivery(client: client, mailer: keeping, configuration: configuration(), logger: logger)
            try await delivery.deliverBatch()
            #expect(keeping.kept.withLock { $0 }.isEmpty, "not while the lease holds")
            try await Task.sleep(for: .milliseconds(1200))
            try await delivery.deliverBatch()
            let sent = keeping.kept.withLock { $0 }
            #expect(sent.count == 1 && sent.first?.messageID == messageID)
            let after = try await row(client)
            #expect(after.status == "sent" && after.body == nil, "the token in the body does not outlive the mail")
        }
    }

    @Test("two deliverers never send one mail twice at the same time")
    func concurrentDeliverers() async throws {
        try await withOutbox { client, outbox in
            for index in 0..<40 { _ = try await enqueue(outbox, client, to: "p\(index)@example.com") }
            let keeping = Transport(.keep)
            let first = MailDelivery(client: client, mailer: keeping, configuration: configuration { $0.maxInFlight = 7 }, logger: logger)
            let second = MailDelivery(client: client, mailer: keeping, configuration: configuration { $0.maxInFlight = 5 }, logger: logger)
            async let a: Void = { while try await first.deliverBatch() {} }()
            async let b: Void = { while try await second.deliverBatch() {} }()
            _ = try await (a, b)
            while try await first.deliverBatch() {}
            let recipients = keeping.kept.withLock { $0 }.map(\.to)
            #expect(recipients.count == 40 && Set(recipients).count == 40)
        }
    }

    @Test("an unsubscribe token works for its account and kind only; an altered one for nothing")
    func unsubscribeTokens() async throws {
        let key = SymmetricKeyForTests.make()
        let mine = UUID()
        let theirs = UUID()
        let token = UnsubscribeLink(accountID: mine, kind: .newRequest).token(key: key)
        #expect(UnsubscribeLink.parse(token, key: key) == UnsubscribeLink(accountID: mine, kind: .newRequest))
        let parts = token.split(separator: ".").map(String.init)
        // Another account's id, or another kind, under my token's MAC.
        #expect(UnsubscribeLink.parse("\(theirs.uuidString.lowercased()).\(parts[1]).\(parts[2])", key: key) == nil)
        #expect(UnsubscribeLink.parse("\(parts[0]).weekly_digest.\(parts[2])", key: key) == nil)
        // A security mail's kind can never be turned off, even under a valid MAC.
        let security = UnsubscribeLink(accountID: mine, kind: .activation).token(key: key)
        #expect(UnsubscribeLink.parse(security, key: key) == nil)
        #expect(UnsubscribeLink.parse(token + "x", key: key) == nil)
        #expect(UnsubscribeLink.parse(token, key: SymmetricKeyForTests.make()) == nil, "another server's key")
    }
}

/// The outbox under a real mail program that misbehaves, through the real server: requests answer within
/// their bounds whatever the program does, and the mail is retried until the program works.
@Suite("Mail outbox with a real mail program")
struct MailProgramOutboxTests {
    @Test("a hanging mail program: registration answers at once; the mail is retried, and sent once the program works")
    func hangingProgram() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-mailprog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let program = directory.appendingPathComponent("sendmail")
        let delivered = directory.appendingPathComponent("delivered.eml")
        try await ExecutableScript.write("#!/bin/sh\nexec sleep 3600\n", to: program)
        try await TestHarness.run(
            configure: {
                $0.mailTransport = .sendmail
                $0.mailProgram = program.path
                $0.mailProgramTimeout = .seconds(1)
                $0.mailDelivery.backoffBase = .milliseconds(300)
                $0.mailDelivery.backoffCap = .milliseconds(300)
            }
        ) { harness in
            let person = TestHarness.Person()
            let start = ContinuousClock.now
            let registered = try await harness.request(.post, "/v1/users", json: person.registrationJSON)
            #expect(registered.status == .created || registered.status == .accepted, "\(registered.status)")
            #expect(ContinuousClock.now - start < .seconds(3), "no request waits for the mail program")
            // The attempt is killed at the program's bound and recorded for a retry.
            let deadline = ContinuousClock.now + .seconds(15)
            while ContinuousClock.now < deadline,
                try await harness.int("SELECT count(*) FROM mail_outbox WHERE last_error IS NOT NULL AND status = 'pending'") == 0
            {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await harness.int("SELECT count(*) FROM mail_outbox WHERE status = 'pending' AND attempts >= 1") == 1)
            // Meanwhile other requests are answered as usual.
            #expect(try await harness.request(.get, "/health/live").status == .ok)
            // The program is repaired: the retry sends the mail, once.
            try await ExecutableScript.write("#!/bin/sh\ncat > '\(delivered.path)'\n", to: program)
            while ContinuousClock.now < deadline + .seconds(15),
                try await harness.int("SELECT count(*) FROM mail_outbox WHERE status = 'sent'") == 0
            {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await harness.int("SELECT count(*) FROM mail_outbox WHERE status = 'sent'") == 1)
            let mail = try String(contentsOf: delivered, encoding: .utf8)
            #expect(mail.contains("To: <\(person.email)>") && mail.contains("Activation token: "))
        }
    }
}
