import Foundation
import Logging
import NIOPosix

/// Writes each mail as an `.eml` file into a directory (development and tests read activation tokens from it).
package struct FileMailer: Mailer {
    package let directory: URL
    package let sender: String

    package init(directory: URL, sender: String) {
        self.directory = directory
        self.sender = sender
    }

    package func send(_ mail: OutgoingMail) async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let stamp = Int(Date().timeIntervalSince1970 * 1000)
        let file = directory.appendingPathComponent("\(stamp)-\(UUID().uuidString.lowercased()).eml")
        // Write to a temporary name first so a reader never sees half a mail.
        let partial = file.appendingPathExtension("partial")
        try Data(RFC5322Message.render(mail, from: sender).utf8).write(to: partial)
        try FileManager.default.moveItem(at: partial, to: file)
    }
}

/// Pipes each mail to `sendmail -t -i`.
package struct SendmailMailer: Mailer {
    package let sender: String
    package let executable: String

    package init(sender: String, executable: String = "/usr/sbin/sendmail") {
        self.sender = sender
        self.executable = executable
    }

    package func send(_ mail: OutgoingMail) async throws {
        let message = RFC5322Message.render(mail, from: sender)
        let executable = self.executable
        // Waiting for the child blocks a thread: do it on NIO's blocking pool, not the cooperative one.
        try await NIOThreadPool.singleton.runIfActive { try Self.pipe(message, to: executable) }
    }

    private static func pipe(_ message: String, to executable: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-t", "-i"]
        let input = Pipe()
        process.standardInput = input
        do { try process.run() } catch {
            throw MailDeliveryError(description: "cannot start \(executable): \(error)")
        }
        input.fileHandleForWriting.write(Data(message.utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw MailDeliveryError(description: "\(executable) exited with status \(process.terminationStatus)")
        }
    }
}

/// Records that a mail was sent, and nothing of its body or recipient: bodies carry tokens and recipients
/// are people, and neither may reach a log line. Useful where mail is not needed (benchmarks, CI).
package struct LogMailer: Mailer {
    package let logger: Logger

    package init(logger: Logger) { self.logger = logger }

    package func send(_ mail: OutgoingMail) async throws {
        logger.info("mail not delivered (MAIL_TRANSPORT=log)", metadata: ["mail.subject": "\(mail.subject)"])
    }
}
