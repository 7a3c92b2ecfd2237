import Foundation

/// Who a notification is written to, read in the transaction that writes it.
package struct MailRecipient: Sendable {
    package var email: String
    package var language: Language
    /// A person's time zone, for the times a mail names; nil for companies (their times are in UTC).
    package var timeZone: TimeZone?
    /// The one-click link that turns this kind of mail off (RFC 8058), also written in the body.
    package var unsubscribeURL: String

    package init(email: String, language: Language, timeZone: TimeZone?, unsubscribeURL: String) {
        self.email = email
        self.language = language
        self.timeZone = timeZone
        self.unsubscribeURL = unsubscribeURL
    }
}
