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
