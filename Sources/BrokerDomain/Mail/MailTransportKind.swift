import Foundation

/// Where mails go: `MAIL_TRANSPORT` = `file`, `sendmail` or `log`.
package enum MailTransportKind: String, Sendable {
    case file, sendmail, log
}
