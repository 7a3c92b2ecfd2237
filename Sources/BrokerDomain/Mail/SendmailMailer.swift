import Foundation
import Logging
import NIOPosix

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
