import Foundation

/// One plain-text mail.
package struct OutgoingMail: Sendable, Equatable {
    package var to: String
    package var subject: String
    package var body: String
    /// The Message-ID's left part. The outbox fixes it when the mail is written, so every attempt to send
    /// it (delivery is at least once) sends the same message, which a mail client shows once.
    package var messageID: UUID
    /// The one-click unsubscribe URL of a notification (RFC 8058): sent as `List-Unsubscribe` with
    /// `List-Unsubscribe-Post`.
    package var listUnsubscribe: String?

    package init(to: String, subject: String, body: String, messageID: UUID = UUID(), listUnsubscribe: String? = nil) {
        self.to = to
        self.subject = subject
        self.body = body
        self.messageID = messageID
        self.listUnsubscribe = listUnsubscribe
    }
}
