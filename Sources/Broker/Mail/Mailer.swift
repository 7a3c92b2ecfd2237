import Foundation

/// One plain-text mail.
public struct OutgoingMail: Sendable, Equatable {
    public var to: String
    public var subject: String
    public var body: String

    public init(to: String, subject: String, body: String) {
        self.to = to
        self.subject = subject
        self.body = body
    }
}

/// Where mails go: `MAIL_TRANSPORT` = `file`, `sendmail` or `log`.
public enum MailTransportKind: String, Sendable {
    case file, sendmail, log
}

/// Sends mail; implementations are the configured transports.
public protocol Mailer: Sendable {
    func send(_ mail: OutgoingMail) async throws
}

/// A mail transport failed; the registration that wanted to send it is rolled back.
public struct MailDeliveryError: Error, CustomStringConvertible {
    public let description: String
}
