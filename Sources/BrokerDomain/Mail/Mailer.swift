import Foundation

/// One plain-text mail.
package struct OutgoingMail: Sendable, Equatable {
    package var to: String
    package var subject: String
    package var body: String

    package init(to: String, subject: String, body: String) {
        self.to = to
        self.subject = subject
        self.body = body
    }
}

/// Where mails go: `MAIL_TRANSPORT` = `file`, `sendmail` or `log`.
package enum MailTransportKind: String, Sendable {
    case file, sendmail, log
}

/// Sends mail; implementations are the configured transports.
package protocol Mailer: Sendable {
    func send(_ mail: OutgoingMail) async throws
}

/// A mail transport failed; the registration that wanted to send it is rolled back.
package struct MailDeliveryError: Error, CustomStringConvertible {
    package let description: String
}
