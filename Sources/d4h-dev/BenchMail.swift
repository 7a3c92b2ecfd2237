import ArgumentParser
import BrokerDomain
import CommandLineSupport
import Foundation
import Logging
import NIOSSL
import PostgresNIO

extension Bench {
    struct Mail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mails per second from the outbox to a local SMTP sink, against the same mails sent straight to it.")

        @Option(help: "A migrated database (the outbox's table).") var databaseURL: String
        @Option(help: "The SMTP sink's port (scripts/smtp-sink.py, STARTTLS and AUTH).") var smtpPort: Int
        @Option(help: "The sink's certificate, trusted for the bench.") var caFile: String
        @Option(help: "The sink's user.") var user = "bench"
        @Option(help: "The sink's password.") var password = "bench-password"
        @Option(help: "Mails to send each way.") var mails = 2_000
        @Option(help: "Mails in flight at once (the outbox's MAIL_CONCURRENCY, and the baseline's).") var concurrency = 8

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let settings = SMTPSettings(
                host: "127.0.0.1", port: smtpPort, security: .starttls, credentials: .init(username: user, password: password),
                trustRoots: try NIOSSLCertificate.fromPEMFile(caFile), timeout: .seconds(30))
            let mailer = try SMTPMailer(settings: settings, sender: "bench@data4help.example")
            let batch = (0..<mails).map { n in
                OutgoingMail(
                    to: "person-\(n)@bench.data4help.example", subject: "Your week on Data4Help",
                    body: String(repeating: "A line of a weekly digest, as long as a real one.\n", count: 20))
            }

            // The baseline: the same mails straight to the sink, `concurrency` at a time.
            let directStart = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                var next = 0
                for _ in 0..<min(concurrency, batch.count) {
                    let mail = batch[next]
                    next += 1
                    group.addTask { try await mailer.send(mail) }
                }
                while try await group.next() != nil, next < batch.count {
                    let mail = batch[next]
                    next += 1
                    group.addTask { try await mailer.send(mail) }
                }
                try await group.waitForAll()
            }
            let direct = (ContinuousClock.now - directStart).inSeconds

            let (written, outbox) = try await withDatabase(url: databaseURL, logger: logger) { client -> (Double, Double) in
                let box = MailOutbox(client: client, publicURL: "http://127.0.0.1:8080")
                let writeStart = ContinuousClock.now
                let messageIDs = batch.map { _ in UUID() }
                try await client.withTransaction(logger: logger) { connection in
                    for (mail, id) in zip(batch, messageIDs) {
                        var fresh = mail
                        fresh.messageID = id
                        try await box.enqueue(fresh, kind: .weeklyDigest, accountID: nil, on: connection, logger: logger)
                    }
                }
                let written = (ContinuousClock.now - writeStart).inSeconds
                var configuration = MailDeliveryConfiguration()
                configuration.maxInFlight = concurrency
                let delivery = MailDelivery(client: client, mailer: mailer, configuration: configuration, logger: logger)
                let sendStart = ContinuousClock.now
                while try await delivery.deliverBatch() {}
                // Only this bench's mails: the bench server on the same database queues mails of its own, and its
                // delivery loop may hold some of these under its lease for a moment (sent to its log).
                var counts = try await box.counts(messageIDs: messageIDs, logger: logger)
                let deadline = ContinuousClock.now + .seconds(30)
                while counts["pending"] != 0, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(100))
                    counts = try await box.counts(messageIDs: messageIDs, logger: logger)
                }
                guard counts["pending"] == 0, counts["dead"] == 0 else { throw ValidationError("mails left: \(counts)") }
                return (written, (ContinuousClock.now - sendStart).inSeconds)
            }

            print("## Mail outbox (\(mails) mails to a local SMTP sink over STARTTLS with AUTH, \(concurrency) at a time)")
            print("| path | mails | seconds | mails/s | ratio to direct |")
            print("|---|---:|---:|---:|---:|")
            for (name, seconds) in [
                ("outbox → delivery loop → SMTP (claim, send, record)", outbox),
                ("SMTP sends straight to the sink (baseline)", direct),
            ] {
                print(
                    "| \(name) | \(mails) | \(String(format: "%.2f", seconds)) | \(Int(Double(mails) / seconds)) | \(String(format: "%.2f", direct / seconds)) |"
                )
            }
            print("Writing the \(mails) mails into the outbox in one transaction took \(String(format: "%.2f", written)) s.")
        }
    }
}
