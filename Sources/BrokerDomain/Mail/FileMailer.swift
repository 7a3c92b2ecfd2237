import Foundation

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
        // The system's time, not the injected clock: the name orders the files as they were written, which a
        // test's clock standing still would not.
        let stamp = Int(Date().timeIntervalSince1970 * 1000)
        let file = directory.appendingPathComponent("\(stamp)-\(UUID().uuidString.lowercased()).eml")
        // Write to a temporary name first so a reader never sees half a mail.
        let partial = file.appendingPathExtension("partial")
        try Data(RFC5322Message.render(mail, from: sender).utf8).write(to: partial)
        try FileManager.default.moveItem(at: partial, to: file)
    }
}
