import Foundation
import Logging

/// Records that a mail was sent, and nothing of its body or recipient: bodies carry tokens and recipients
/// are people, and neither may reach a log line. Useful where mail is not needed (benchmarks, CI).
package struct LogMailer: Mailer {
    package let logger: Logger

    package init(logger: Logger) { self.logger = logger }

    package func send(_ mail: OutgoingMail) async throws {
        logger.info("mail not delivered (MAIL_TRANSPORT=log)", metadata: ["mail.subject": "\(mail.subject)"])
    }
}
