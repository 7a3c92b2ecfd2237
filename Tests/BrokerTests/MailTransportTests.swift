import Foundation
import Logging
import NIOPosix
import NIOSSL
import Synchronization
import Testing

@testable import BrokerDomain
@testable import BrokerServer

/// The mail transports against the real thing: `MAIL_TRANSPORT=smtp` against aiosmtpd (scripts/smtp-sink.py)
/// with STARTTLS, implicit TLS and AUTH, and `MAIL_TRANSPORT=sendmail` against real executable scripts.
@Suite("Mail transports", .timeLimit(.minutes(1)))
struct MailTransportTests {
    static let user = "d4h-relay"
    static let password = "correct horse battery staple"
    static let sender = "no-reply@data4help.example"
    static let recipient = "laura.bianchi@example.com"

    // MARK: SMTP

    /// A sink with `options`, its certificate, and a mailer trusting only that certificate; stopped after `body`.
    static func withSink(
        _ options: [String] = [], credentials: Bool = true, _ body: (SMTPSink, TLSTests.CertificateFiles) async throws -> Void
    ) async throws {
        let certificate = try await TLSTests.makeCertificate()
        defer { certificate.remove() }
        let sink = try await SMTPSink.start(
            ["--cert", certificate.certificate.path, "--key", certificate.key.path]
                + (credentials ? ["--user", user, "--password", password] : []) + options)
        do {
            try await body(sink, certificate)
        } catch {
            await sink.stop()
            throw error
        }
        await sink.stop()
    }

    static func mailer(
        port: Int, certificate: TLSTests.CertificateFiles?, host: String = "127.0.0.1", security: SMTPSettings.Security = .starttls,
        password: String? = MailTransportTests.password, timeout: Duration = .seconds(20)
    ) throws -> SMTPMailer {
        let settings = SMTPSettings(
            host: host, port: port, security: security,
            credentials: password.map { SMTPSettings.Credentials(username: user, password: $0) },
            trustRoots: try certificate.map { try NIOSSLCertificate.fromPEMFile($0.certificate.path) }, timeout: timeout)
        return try SMTPMailer(settings: settings, sender: sender)
    }

    /// `body`'s result within `limit`. A send that never returns (an unbounded wait is what several of these
    /// tests look for) fails the test at `limit` rather than hanging the run: it is left running, as no
    /// cancellation would reach a wait that has no bound.
    static func bounded<T: Sendable>(within limit: Duration = .seconds(30), _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let resumed = Mutex(false)
            let resume = { @Sendable (result: Result<T, any Error>) in
                guard
                    resumed.withLock({ done in
                        defer { done = true }
                        return !done
                    })
                else { return }
                continuation.resume(with: result)
            }
            Task {
                do { resume(.success(try await body())) } catch { resume(.failure(error)) }
            }
            Task {
                try? await Task.sleep(for: limit)
                resume(.failure(TestSetupError("the send did not return within \(limit)")))
            }
        }
    }

    /// The failure `body` throws within 30 s, which must be a `MailDeliveryError`.
    static func deliveryError(_ body: @escaping @Sendable () async throws -> Void) async throws -> MailDeliveryError {
        do {
            try await bounded(body)
        } catch let error as MailDeliveryError {
            return error
        }
        throw TestSetupError("the send succeeded; it was meant to fail")
    }

    @Test("a mail arrives intact over STARTTLS and AUTH PLAIN: UTF-8, lines starting with a dot, no smuggled commands")
    func aMailArrivesIntact() async throws {
        try await Self.withSink { sink, certificate in
            let subject = "Attivazione dell'account — città ✓"
            // ".", "..x" and ".x" lines must come through as written; a CRLF.CRLF inside the body must neither
            // end the message nor let the rest be read as commands (SMTP smuggling); nor may a bare LF one.
            let body = [
                "Ciao Laura, è tutto pronto ✓", ".", "..two dots", ".one dot", "before\r\n.\r\nMAIL FROM:<evil@example.net>",
                "after\n.\nRCPT TO:<evil@example.net>", "the end",
            ].joined(separator: "\n")
            // "localhost": the certificate's DNS name is checked through SNI (127.0.0.1 elsewhere: its IP address).
            let mailer = try Self.mailer(port: sink.port, certificate: certificate, host: "localhost")
            try await Self.bounded { try await mailer.send(OutgoingMail(to: Self.recipient, subject: subject, body: body)) }

            let mails = try sink.mails()
            try #require(mails.count == 1)
            let mail = mails[0]
            #expect(mail.mailFrom == Self.sender)
            #expect(mail.recipients == [Self.recipient])
            #expect(mail.user == Self.user)
            #expect(mail.tls)
            #expect(mail.mailOptions.contains("BODY=8BITMIME"))
            let parts = mail.message.components(separatedBy: "\r\n\r\n")
            let headers = parts[0].components(separatedBy: "\r\n")
            let receivedBody = parts.dropFirst().joined(separator: "\r\n\r\n")
            let encodedSubject = try #require(headers.first { $0.hasPrefix("Subject: ") }?.dropFirst("Subject: ".count))
            let base64 = encodedSubject.dropFirst("=?UTF-8?B?".count).dropLast("?=".count)
            #expect(String(decoding: Data(base64Encoded: String(base64)) ?? Data(), as: UTF8.self) == subject)
            #expect(headers.contains("To: <\(Self.recipient)>"))
            #expect(headers.contains("From: Data4Help <\(Self.sender)>"))
            #expect(headers.contains { $0.hasPrefix("Message-ID: <") })
            // Every line break arrives as CRLF, bare ones included; nothing else changes.
            let expected = body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n") + "\r\n"
            #expect(receivedBody == expected)
            // The password went over TLS only; one MAIL, one RCPT: nothing smuggled.
            let transcript = sink.transcript()
            #expect(transcript.contains("AUTH tls"))
            #expect(!transcript.contains("AUTH plain"))
            #expect(transcript.filter { $0.hasPrefix("MAIL ") } == ["MAIL tls"])
            #expect(transcript.filter { $0.hasPrefix("RCPT ") } == ["RCPT tls"])
            #expect(transcript.last == "QUIT tls")
        }
    }

    @Test("a server that offers only AUTH LOGIN gets LOGIN")
    func loginWhenOnlyLoginIsOffered() async throws {
        try await Self.withSink(["--mechanisms", "LOGIN"]) { sink, certificate in
            let mailer = try Self.mailer(port: sink.port, certificate: certificate)
            try await Self.bounded { try await mailer.send(OutgoingMail(to: Self.recipient, subject: "s", body: "b")) }
            #expect(try sink.mails().map(\.user) == [Self.user])
        }
    }

    @Test("implicit TLS (port 465 style) delivers")
    func implicitTLS() async throws {
        try await Self.withSink(["--tls", "implicit"]) { sink, certificate in
            let mailer = try Self.mailer(port: sink.port, certificate: certificate, security: .implicit)
            try await Self.bounded { try await mailer.send(OutgoingMail(to: Self.recipient, subject: "s", body: "b")) }
            let mails = try sink.mails()
            #expect(mails.count == 1)
            #expect(mails.first?.tls == true)
            #expect(sink.transcript().first == "EHLO tls")
        }
    }

    @Test("a wrong password is a permanent authentication failure that names neither password nor recipient")
    func wrongPasswordIsPermanent() async throws {
        try await Self.withSink { sink, certificate in
            let mailer = try Self.mailer(port: sink.port, certificate: certificate, password: "not the password")
            let error = try await Self.deliveryError { try await mailer.send(OutgoingMail(to: Self.recipient, subject: "s", body: "b")) }
            #expect(error.kind == .authentication)
            #expect(error.permanent)
            #expect(error.description.contains("535"))
            #expect(!error.description.contains("not the password"))
            #expect(!error.description.contains(Self.recipient))
            #expect(try sink.mails().isEmpty)
            #expect(!sink.transcript().contains { $0.hasPrefix("MAIL") })
        }
    }

    @Test("a server that does not offer STARTTLS is refused before AUTH or anything of the mail is sent")
    func noSTARTTLSNoAUTH() async throws {
        try await Self.withSink(["--tls", "none"], credentials: false) { sink, _ in
            let mailer = try Self.mailer(port: sink.port, certificate: nil)
            let error = try await Self.deliveryError { try await mailer.send(OutgoingMail(to: Self.recipient, subject: "s", body: "b")) }
            #expect(error.kind == .tls)
            #expect(error.permanent)
            #expect(error.description.contains("STARTTLS"))
            // Only the EHLO that found no STARTTLS: no AUTH, no MAIL, no RCPT, no DATA, in clear or otherwise.
            #expect(sink.transcript() == ["EHLO plain"])
            #expect(try sink.mails().isEmpty)
        }
    }

    @Test("a certificate the mailer does not trust is refused before AUTH (a man in the middle's own certificate)")
    func untrustedCertificate() async throws {
        try await Self.withSink { sink, _ in
            let other = try await TLSTests.makeCertificate()
            defer { other.remove() }
            let mailer = try Self.mailer(port: sink.port, certificate: other)
            let error = try await Self.deliveryError { try await mailer.send(OutgoingMail(to: Self.recipient, subject: "s", body: "b")) }
            #expect(error.kind == .tls)
            #expect(error.permanent)
            #expect(sink.transcript() == ["EHLO plain", "STARTTLS plain"])
        }
    }

    @Test(
        "a refusal at RCPT: 4xx is temporary, 5xx permanent, and the server's words lose the recipient's address",
        arguments: [("451 4.3.0 Try again later", false), ("550 5.1.1 <\(MailTransportTests.recipient)>: no such user", true)])
    func refusalAtRCPT(reply: String, permanent: Bool) async throws {
        try await Self.withSink(["--rcpt-reply", reply]) { sink, certificate in
            let mailer = try Self.mailer(port: sink.port, certificate: certificate)
            let error = try await Self.deliveryError { try await mailer.send(OutgoingMail(to: Self.recipient, subject: "s", body: "b")) }
            #expect(error.kind == .rejected)
            #expect(error.permanent == permanent)
            #expect(error.description.contains(String(reply.prefix(3))))
            #expect(error.description.contains("RCPT"))
            #expect(!error.description.lowercased().contains(Self.recipient))
            #expect(try sink.mails().isEmpty)
        }
    }

    @Test("a server that accepts the connection and never answers times out within the bound, as temporary")
    func silentServerTimesOut() async throws {
        // A listening socket nobody accepts on: the kernel completes the handshake, and no greeting ever comes.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 8) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))

        let mailer = try Self.mailer(port: port, certificate: nil, timeout: .seconds(2))
        let start = ContinuousClock.now
        let error = try await Self.deliveryError { try await mailer.send(OutgoingMail(to: Self.recipient, subject: "s", body: "b")) }
        let elapsed = ContinuousClock.now - start
        #expect(error.kind == .timeout)
        #expect(!error.permanent)
        #expect(error.description.contains("greeting"))
        #expect(elapsed >= .milliseconds(1900))
        #expect(elapsed < .seconds(6))
    }

    @Test("nothing is sent for an address that would end the SMTP command early")
    func injectedRecipient() async throws {
        try await Self.withSink { sink, certificate in
            let mailer = try Self.mailer(port: sink.port, certificate: certificate)
            let error = try await Self.deliveryError {
                try await mailer.send(OutgoingMail(to: "a@example.com>\r\nRCPT TO:<evil@example.net", subject: "s", body: "b"))
            }
            #expect(error.kind == .address)
            #expect(error.permanent)
            #expect(sink.transcript().isEmpty)
        }
    }

    @Test("MAIL_TRANSPORT=smtp from the environment: the password file, the CA file and MAIL_FROM are used")
    func smtpFromTheEnvironment() async throws {
        try await Self.withSink { sink, certificate in
            let passwordFile = certificate.directory.appendingPathComponent("smtp-password")
            try Data((Self.password + "\n").utf8).write(to: passwordFile)
            let configuration = try BrokerConfiguration(
                reader: ConfigReaderForTests.environment([
                    "MAIL_TRANSPORT": "smtp", "SMTP_HOST": "127.0.0.1", "SMTP_PORT": "\(sink.port)", "SMTP_USERNAME": Self.user,
                    "SMTP_PASSWORD_FILE": passwordFile.path, "SMTP_CA_FILE": certificate.certificate.path, "SMTP_TIMEOUT": "20",
                    "MAIL_FROM": "alerts@data4help.example",
                ]))
            let mailer = try makeMailer(configuration: configuration, logger: Logger(label: "test"))
            try await Self.bounded { try await mailer.send(OutgoingMail(to: Self.recipient, subject: "s", body: "b")) }
            let mails = try sink.mails()
            #expect(mails.map(\.mailFrom) == ["alerts@data4help.example"])
            #expect(mails.map(\.user) == [Self.user])
        }
    }

    @Test(
        "mail settings that are refused at start, each naming its variable",
        arguments: [
            (["SMTP_HOST": ""], "SMTP_HOST"),
            (["SMTP_HOST": "smtp.example.com", "SMTP_TLS": "sometimes"], "SMTP_TLS"),
            (["SMTP_HOST": "smtp.example.com", "SMTP_TLS": "none"], "SMTP_TLS"),
            (["SMTP_HOST": "127.0.0.1", "SMTP_TLS": "none", "SMTP_USERNAME": "u", "SMTP_PASSWORD_FILE": "/etc/hostname"], "SMTP_USERNAME"),
            (["SMTP_HOST": "smtp.example.com", "SMTP_USERNAME": "u"], "SMTP_PASSWORD_FILE"),
            (["SMTP_HOST": "smtp.example.com", "SMTP_USERNAME": "u", "SMTP_PASSWORD_FILE": "/nonexistent/password"], "SMTP_PASSWORD_FILE"),
            (["SMTP_HOST": "smtp.example.com", "SMTP_CA_FILE": "/nonexistent/ca.pem"], "SMTP_CA_FILE"),
            (["SMTP_HOST": "smtp.example.com", "SMTP_PORT": "70000"], "SMTP_PORT"),
            (["SMTP_HOST": "smtp.example.com", "SMTP_TIMEOUT": "0"], "SMTP_TIMEOUT"),
            (["SMTP_HOST": "smtp.example.com", "MAIL_FROM": "a@example.com>\r\nRCPT TO:<b@example.net"], "MAIL_FROM"),
            (["MAIL_TRANSPORT": "sendmail", "MAIL_PROGRAM": "/nonexistent/sendmail"], "MAIL_PROGRAM"),
            (["MAIL_TRANSPORT": "sendmail", "MAIL_PROGRAM": "/bin/sh", "MAIL_PROGRAM_TIMEOUT": "0"], "MAIL_PROGRAM_TIMEOUT"),
        ])
    func refusedSettings(environment: [String: String], variable: String) throws {
        let error = #expect(throws: ConfigurationError.self) {
            _ = try BrokerConfiguration(reader: ConfigReaderForTests.environment(["MAIL_TRANSPORT": "smtp"].merging(environment) { $1 }))
        }
        #expect(error?.description.hasPrefix(variable + " ") == true, "\(String(describing: error))")
    }

    // MARK: sendmail

    /// A directory with an executable shell script `script` holding `text` (DIR in it is the directory).
    static func program(_ text: String) async throws -> (directory: URL, script: URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-mail-program-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = directory.appendingPathComponent("sendmail")
        try await ExecutableScript.write("#!/bin/sh\n" + text.replacingOccurrences(of: "DIR", with: directory.path) + "\n", to: script)
        return (directory, script)
    }

    /// True once `pid` runs no more: gone, or (not ours to reap) a zombie waiting for init.
    static func hasEnded(_ pid: pid_t) -> Bool {
        if kill(pid, 0) == -1 && errno == ESRCH { return true }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = stat.range(of: ") ") else { return true }
        return ["Z", "X"].contains(stat[end.upperBound...].prefix(1))
    }

    static func pid(in file: URL) throws -> pid_t {
        try #require(pid_t(String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    @Test("a working program gets the rendered message on its standard input, with -t -i")
    func workingProgram() async throws {
        let (directory, script) = try await Self.program(#"echo "$@" > DIR/arguments; cat > DIR/message"#)
        defer { try? FileManager.default.removeItem(at: directory) }
        let mailer = SendmailMailer(sender: Self.sender, executable: script.path)
        try await Self.bounded { try await mailer.send(OutgoingMail(to: Self.recipient, subject: "Hello", body: ".\nBody")) }
        #expect(try String(contentsOf: directory.appendingPathComponent("arguments"), encoding: .utf8) == "-t -i\n")
        let message = try String(contentsOf: directory.appendingPathComponent("message"), encoding: .utf8)
        #expect(message.hasPrefix("From: Data4Help <\(Self.sender)>\r\n"))
        #expect(message.contains("\r\nSubject: Hello\r\n"))
        #expect(message.hasSuffix("\r\n\r\n.\r\nBody\r\n"))  // -i: the program, not the caller, treats "." as text
    }

    @Test("a hung program, and what it started, are stopped within the bound even when they ignore SIGTERM; the send is temporary")
    func hungProgramIsStopped() async throws {
        let (directory, script) = try await Self.program("trap '' TERM\necho $$ > DIR/shell.pid\nsleep 3600 &\necho $! > DIR/child.pid\nwait")
        defer { try? FileManager.default.removeItem(at: directory) }
        let started = Mutex<pid_t>(0)
        let mailer = SendmailMailer(sender: Self.sender, executable: script.path, timeout: .seconds(1))
        let start = ContinuousClock.now
        let error = try await Self.deliveryError {
            try await mailer.send(OutgoingMail(to: Self.recipient, subject: "s", body: "b")) { pid in started.withLock { $0 = pid } }
        }
        let elapsed = ContinuousClock.now - start
        #expect(error.kind == .timeout)
        #expect(!error.permanent)
        // The bound (1 s) and the grace between SIGTERM and SIGKILL (2 s), with room for a loaded machine.
        #expect(elapsed < .seconds(8))
        let shell = try Self.pid(in: directory.appendingPathComponent("shell.pid"))
        let child = try Self.pid(in: directory.appendingPathComponent("child.pid"))
        #expect(shell == started.withLock { $0 })
        // Our child is reaped (no zombie left either); its own child, an orphan now, is dead.
        #expect(kill(shell, 0) == -1 && errno == ESRCH)
        let deadline = ContinuousClock.now + .seconds(3)
        while !Self.hasEnded(child) && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(Self.hasEnded(child), "sleep (pid \(child)) outlived the mail program")
    }

    @Test("a program's failure: EX_TEMPFAIL is temporary, another status permanent", arguments: [(75, false), (1, true)])
    func failingProgram(status: Int, permanent: Bool) async throws {
        let (directory, script) = try await Self.program("cat > /dev/null; exit \(status)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = try await Self.deliveryError {
            try await SendmailMailer(sender: Self.sender, executable: script.path).send(OutgoingMail(to: Self.recipient, subject: "s", body: "b"))
        }
        #expect(error.kind == .mailProgram)
        #expect(error.permanent == permanent)
        #expect(error.description.contains("status \(status)"))
    }

    @Test("a missing program is a permanent failure that says so")
    func missingProgram() async throws {
        let error = try await Self.deliveryError {
            try await SendmailMailer(sender: Self.sender, executable: "/nonexistent/sendmail").send(
                OutgoingMail(to: Self.recipient, subject: "s", body: "b"))
        }
        #expect(error.kind == .mailProgram)
        #expect(error.permanent)
        #expect(error.description.contains("No such file"))
    }

    @Test("hung programs hold at most four threads of their own: NIO's blocking pool stays free, and extra sends give up in time")
    func hungProgramsDoNotStarveTheServer() async throws {
        // Deaf to SIGTERM, so each holds its slot through the grace period too (2 s + 2 s): the two sends that
        // wait for a slot give up at 2 s, well before one comes free.
        let (directory, script) = try await Self.program("trap '' TERM\necho $$ >> DIR/started\nexec sleep 3600")
        defer { try? FileManager.default.removeItem(at: directory) }
        let mailer = SendmailMailer(sender: Self.sender, executable: script.path, timeout: .seconds(2))
        let start = ContinuousClock.now
        let errors = try await withThrowingTaskGroup(of: MailDeliveryError.self) { group in
            for _ in 0..<6 {
                group.addTask { try await Self.deliveryError { try await mailer.send(OutgoingMail(to: Self.recipient, subject: "s", body: "b")) } }
            }
            // While the programs hang, the blocking pool the rest of the server uses (file I/O, …) still answers.
            try await Task.sleep(for: .seconds(1))
            let poolStart = ContinuousClock.now
            #expect(try await NIOThreadPool.singleton.runIfActive { 42 } == 42)
            #expect(ContinuousClock.now - poolStart < .seconds(1))
            let started = (try? String(contentsOf: directory.appendingPathComponent("started"), encoding: .utf8)) ?? ""
            #expect(started.split(separator: "\n").count == 4, "mail programs running at once: \(started)")
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(errors.count == 6)
        #expect(errors.allSatisfy { $0.kind == .timeout && !$0.permanent })
        #expect(errors.filter { $0.description.contains("slot") }.count == 2)
        #expect(ContinuousClock.now - start < .seconds(10))
    }
}
