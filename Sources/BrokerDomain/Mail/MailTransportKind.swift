import Foundation

/// Where mails go: `MAIL_TRANSPORT` = `file`, `sendmail`, `smtp` or `log`.
package enum MailTransportKind: String, Sendable {
    case file, sendmail, smtp, log
}
