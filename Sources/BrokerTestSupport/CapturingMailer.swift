import BrokerDomain
import Foundation
import Synchronization

/// Keeps mails in memory: `d4h seed` activates demo accounts through the real activation path with the
/// token it captures here, and tests read tokens from it.
package final class CapturingMailer: Mailer {
    private let mails = Mutex<[OutgoingMail]>([])

    package init() {}

    package func send(_ mail: OutgoingMail) async throws {
        mails.withLock { $0.append(mail) }
    }

    package var sent: [OutgoingMail] { mails.withLock { $0 } }

    /// The activation token of the last mail sent to `email`.
    package func activationToken(for email: String) -> String? {
        sent.last { $0.to == email.lowercased() }.flatMap { Self.activationToken(in: $0.body) }
    }

    /// Reads the `Activation token: …` line the contract puts in every activation mail.
    package static func activationToken(in body: String) -> String? {
        body.split(whereSeparator: \.isNewline)
            .first { $0.hasPrefix("Activation token: ") }
            .map { String($0.dropFirst("Activation token: ".count)).trimmingCharacters(in: .whitespaces) }
    }
}
