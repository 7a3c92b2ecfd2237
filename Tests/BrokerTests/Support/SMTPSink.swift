import Foundation

/// scripts/smtp-sink.py (aiosmtpd from var/venv, `make test-tools`) on 127.0.0.1 and a port the system chose,
/// keeping every mail it accepts, for the SMTP transport's tests: a real SMTP server, not a stand-in.
struct SMTPSink {
    /// One accepted mail as the sink wrote it.
    struct Mail: Decodable {
        var mailFrom: String
        var mailOptions: [String]
        var recipients: [String]
        var user: String?
        var tls: Bool
        var content: String

        /// The message's bytes as they arrived after DATA.
        var message: String { String(decoding: Data(base64Encoded: content) ?? Data(), as: UTF8.self) }
    }

    let port: Int
    let directory: URL
    let process: ChildProcess.Running

    var mailDirectory: URL { directory.appendingPathComponent("mail") }
    var transcriptFile: URL { directory.appendingPathComponent("transcript") }

    /// The mails accepted so far, oldest first.
    func mails() throws -> [Mail] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: mailDirectory.path)) ?? []
        return try names.filter { $0.hasSuffix(".json") }.sorted { Int($0.prefix { $0.isNumber }) ?? 0 < Int($1.prefix { $0.isNumber }) ?? 0 }
            .map { try JSONDecoder().decode(Mail.self, from: Data(contentsOf: mailDirectory.appendingPathComponent($0))) }
    }

    /// The verbs of the commands received, each with "tls" or "plain".
    func transcript() -> [String] {
        ((try? String(contentsOf: transcriptFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// The repository's root, from this file's place in it.
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// Starts the sink with these options (`--tls`, `--user`, … as scripts/smtp-sink.py takes them) and waits
    /// up to 30 s for it to listen. The certificate, if any, is the caller's.
    static func start(_ options: [String]) async throws -> SMTPSink {
        let python = repositoryRoot.appendingPathComponent("var/venv/bin/python")
        let script = repositoryRoot.appendingPathComponent("scripts/smtp-sink.py")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw TestSetupError("var/venv has no python: run `make test-tools` (make test does) to install aiosmtpd")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-smtp-sink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ready = directory.appendingPathComponent("port")
        let process = try ChildProcess.start(
            python,
            [
                script.path, "--port", "0", "--out", directory.appendingPathComponent("mail").path,
                "--transcript", directory.appendingPathComponent("transcript").path, "--ready-file", ready.path,
            ] + options,
            output: directory.appendingPathComponent("output"))
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOf: ready, encoding: .utf8), let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                return SMTPSink(port: port, directory: directory, process: process)
            }
            guard process.process.isRunning else {
                throw TestSetupError("smtp-sink.py exited before it listened (`make test-tools` installs aiosmtpd): \(process.printed)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        await process.stop()
        throw TestSetupError("smtp-sink.py did not listen within 30 s: \(process.printed)")
    }

    /// Stops the sink and removes its files.
    func stop() async {
        await process.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
