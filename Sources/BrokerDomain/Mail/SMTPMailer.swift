import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Submits each mail to a mail server over SMTP (RFC 5321; submission, RFC 6409), for operators who relay
/// through a mail provider: `STARTTLS` (RFC 3207) or TLS from the start, then `AUTH PLAIN` or `AUTH LOGIN`
/// (RFC 4954), one connection per mail.
///
/// Every failure is a `MailDeliveryError` that says what failed and whether trying again can help. Nothing
/// here logs, and no error names the password, the recipient or the body: the server's own reply is quoted
/// with the recipient's address taken out of it. One bound, `SMTPSettings.timeout`, covers the whole send:
/// the connection, every reply, the message and `QUIT`.
package struct SMTPMailer: Mailer {
    package let settings: SMTPSettings
    package let sender: String
    private let tls: NIOSSLContext?
    private let group: any EventLoopGroup

    /// Builds the TLS context now, so a trust root NIOSSL cannot use stops the server's start, not a send.
    package init(settings: SMTPSettings, sender: String, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        self.settings = settings
        self.sender = sender
        self.group = group
        if settings.security == .none {
            self.tls = nil
        } else {
            var configuration = TLSConfiguration.makeClientConfiguration()
            // RFC 8996: TLS 1.0 and 1.1 are no longer to be used.
            configuration.minimumTLSVersion = .tlsv12
            if let roots = settings.trustRoots { configuration.trustRoots = .certificates(roots) }
            self.tls = try NIOSSLContext(configuration: configuration)
        }
    }

    package func send(_ mail: OutgoingMail) async throws {
        let sender = try Self.path(self.sender, role: "sender")
        let recipient = try Self.path(mail.to, role: "recipient")
        let data = SMTPMessageData.encode(RFC5322Message.render(mail, from: self.sender))
        let deadline = NIODeadline.now() + TimeAmount(settings.timeout)
        var conversation = Conversation(settings: settings, recipient: mail.to)
        let firstFailure = SMTPFirstFailure()
        let channel: any Channel
        // With implicit TLS the handshake starts as soon as the connection is up; the greeting comes over it.
        let (implicitTLS, hostname) = (settings.security == .implicit ? tls : nil, settings.host.isIPAddress ? nil : settings.host)
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(max(.milliseconds(1), deadline - .now()))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let implicitTLS {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: implicitTLS, serverHostname: hostname))
                        }
                        try channel.pipeline.syncOperations.addHandler(SMTPChannelHandler(deadline: deadline, firstFailure: firstFailure))
                    }
                }
                .connect(host: settings.host, port: settings.port).get()
        } catch {
            throw conversation.failure(error)
        }
        do {
            try await conversation.run(on: channel, tls: tls, sender: sender, recipient: recipient, data: data)
        } catch {
            channel.close(promise: nil)
            throw conversation.failure(firstFailure.explaining(error))
        }
        try? await channel.close()
    }

    /// An address as a path of `MAIL FROM` or `RCPT TO`. Anything that could end the command early or start
    /// another (CR, LF, `<`, `>`, spaces, control characters) makes the mail unsendable: an address is data
    /// from a registration form, and must never become an SMTP command.
    static func path(_ address: String, role: String) throws -> String {
        let unsafe = address.unicodeScalars.contains { $0.value < 0x21 || $0.value == 0x7F || $0 == "<" || $0 == ">" }
        guard !address.isEmpty, !unsafe else {
            throw MailDeliveryError(.address, permanent: true, "the \(role) address cannot be written into an SMTP command")
        }
        return address
    }

    /// The name this client gives in `EHLO`: the sender's domain, or an address literal when that is an
    /// IP address (RFC 5321 §4.1.3).
    static func clientName(sender: String) -> String {
        let domain = sender.split(separator: "@").last.map(String.init) ?? "localhost"
        if domain.contains(":") { return "[IPv6:\(domain.trimmingCharacters(in: CharacterSet(charactersIn: "[]")))]" }
        if !domain.isEmpty, domain.allSatisfy({ $0.isNumber || $0 == "." }) { return "[\(domain)]" }
        return domain.isEmpty ? "localhost" : domain
    }

    /// One mail's conversation, and what it knows for describing a failure: the step it was at.
    private struct Conversation {
        let settings: SMTPSettings
        /// Only to remove it from the server's replies before they are quoted.
        let recipient: String
        var step = "connecting"
        var tlsStarted = false

        init(settings: SMTPSettings, recipient: String) {
            self.settings = settings
            self.recipient = recipient
        }

        mutating func run(on channel: any Channel, tls: NIOSSLContext?, sender: String, recipient: String, data: [UInt8]) async throws {
            let hostname = settings.host.isIPAddress ? nil : settings.host
            tlsStarted = settings.security == .implicit
            step = "the greeting"
            try expect(await exchange(channel, nil), 220)
            let name = SMTPMailer.clientName(sender: sender)
            step = "EHLO"
            var extensions = try expect(await exchange(channel, "EHLO \(name)"), 250).extensions
            if settings.security == .starttls, let tls {
                // Checked before anything else is sent: a man in the middle strips STARTTLS to read the password.
                guard extensions["STARTTLS"] != nil else {
                    throw MailDeliveryError(
                        .tls, permanent: true,
                        "\(settings.host):\(settings.port) does not offer STARTTLS; nothing was sent (SMTP_TLS=starttls requires it)")
                }
                step = "STARTTLS"
                let reply = channel.eventLoop.makePromise(of: SMTPReply.self)
                channel.writeAndFlush(SMTPExchange(bytes: Array("STARTTLS\r\n".utf8), startTLS: tls, serverHostname: hostname, reply: reply))
                    .whenFailure { reply.fail($0) }
                try expect(await reply.futureResult.get(), 220)
                tlsStarted = true
                // RFC 3207 §4.2: everything learnt before TLS is forgotten, the extensions included.
                step = "EHLO after STARTTLS"
                extensions = try expect(await exchange(channel, "EHLO \(name)"), 250).extensions
            }
            if let credentials = settings.credentials {
                // The configuration never pairs a password with SMTP_TLS=none; this keeps it so if that changes.
                guard tlsStarted else {
                    throw MailDeliveryError(.authentication, permanent: true, "refusing to send the SMTP password over a connection without TLS")
                }
                try await authenticate(channel, credentials, mechanisms: extensions["AUTH"] ?? [])
            }
            var parameters = ""
            if extensions["8BITMIME"] != nil { parameters += " BODY=8BITMIME" }
            if !(sender + recipient).allSatisfy(\.isASCII) {
                guard extensions["SMTPUTF8"] != nil else {
                    throw MailDeliveryError(.address, permanent: true, "an address is not ASCII and the server does not offer SMTPUTF8")
                }
                parameters += " SMTPUTF8"
            }
            step = "MAIL FROM"
            try expect(await exchange(channel, "MAIL FROM:<\(sender)>\(parameters)"), 250)
            step = "RCPT TO"
            try expect(await exchange(channel, "RCPT TO:<\(recipient)>"), 250, 251)
            step = "DATA"
            try expect(await exchange(channel, "DATA"), 354)
            step = "the end of the message"
            try expect(await exchange(channel, bytes: data), 250)
            // The mail is accepted; a server that then answers QUIT badly, or not at all, changes nothing.
            step = "QUIT"
            _ = try? await exchange(channel, "QUIT")
        }

        /// `AUTH PLAIN` when offered, else `AUTH LOGIN`.
        private mutating func authenticate(_ channel: any Channel, _ credentials: SMTPSettings.Credentials, mechanisms: [String]) async throws {
            step = "AUTH"
            let encode = { (text: String) in Data(text.utf8).base64EncodedString() }
            if mechanisms.contains("PLAIN") {
                let response = encode("\0\(credentials.username)\0\(credentials.password)")
                var reply = try await exchange(channel, "AUTH PLAIN \(response)")
                // A server that does not take the initial response asks for it with an empty challenge.
                if reply.code == 334 { reply = try await exchange(channel, response) }
                try expect(reply, 235)
            } else if mechanisms.contains("LOGIN") {
                try expect(await exchange(channel, "AUTH LOGIN"), 334)
                try expect(await exchange(channel, encode(credentials.username)), 334)
                try expect(await exchange(channel, encode(credentials.password)), 235)
            } else {
                let offered = mechanisms.isEmpty ? "none" : mechanisms.joined(separator: " ")
                throw MailDeliveryError(
                    .authentication, permanent: true, "the server offers no AUTH mechanism this client speaks (PLAIN, LOGIN); it offers: \(offered)")
            }
        }

        private func exchange(_ channel: any Channel, _ command: String?) async throws -> SMTPReply {
            try await exchange(channel, bytes: command.map { Array(($0 + "\r\n").utf8) })
        }

        private func exchange(_ channel: any Channel, bytes: [UInt8]?) async throws -> SMTPReply {
            let reply = channel.eventLoop.makePromise(of: SMTPReply.self)
            channel.writeAndFlush(SMTPExchange(bytes: bytes, reply: reply)).whenFailure { reply.fail($0) }
            return try await reply.futureResult.get()
        }

        /// The reply when its code is one of `codes`; else 4xx is a temporary refusal, 5xx a permanent one.
        @discardableResult
        private func expect(_ reply: SMTPReply, _ codes: Int...) throws -> SMTPReply {
            if codes.contains(reply.code) { return reply }
            let kind: MailDeliveryError.Kind = step == "AUTH" ? .authentication : .rejected
            let quoted = quote(reply)
            switch reply.code {
            case 400..<500: throw MailDeliveryError(kind, permanent: false, "the server refused \(step) for now: \(quoted)")
            case 500..<600: throw MailDeliveryError(kind, permanent: true, "the server refused \(step): \(quoted)")
            default: throw MailDeliveryError(.protocolViolation, permanent: false, "unexpected reply to \(step): \(quoted)")
            }
        }

        /// The reply as it may be logged: servers often repeat the recipient's address in it.
        private func quote(_ reply: SMTPReply) -> String {
            recipient.isEmpty
                ? reply.description
                : reply.description.replacingOccurrences(of: recipient, with: "<recipient>", options: .caseInsensitive)
        }

        /// Any error of a send as a `MailDeliveryError`.
        func failure(_ error: any Error) -> MailDeliveryError {
            let server = "\(settings.host):\(settings.port)"
            let bound = "\(settings.timeout.components.seconds) s"
            switch error {
            case let error as MailDeliveryError:
                return error
            case SMTPChannelFailure.timedOut, ChannelError.connectTimeout:
                return MailDeliveryError(.timeout, permanent: false, "\(server) did not finish within \(bound) (at \(step))")
            case SMTPChannelFailure.closed, ChannelError.ioOnClosedChannel, ChannelError.alreadyClosed, ChannelError.eof,
                NIOSSLError.uncleanShutdown:
                return MailDeliveryError(.connection, permanent: false, "\(server) closed the connection (at \(step))")
            case SMTPChannelFailure.protocolViolation(let what):
                return MailDeliveryError(.protocolViolation, permanent: false, "\(server) does not speak SMTP as expected (at \(step)): \(what)")
            case is NIOSSLError, is NIOSSLExtraError, is BoringSSLError:
                // A certificate that does not verify, or no TLS version or cipher in common: the same next time.
                return MailDeliveryError(.tls, permanent: true, "TLS with \(server) failed (at \(step)): \(error)")
            default:
                if step == "connecting" {
                    return MailDeliveryError(.connection, permanent: false, "cannot connect to \(server): \(error)")
                }
                return MailDeliveryError(.connection, permanent: false, "the connection to \(server) failed (at \(step)): \(error)")
            }
        }
    }
}

extension String {
    /// An IPv4 or IPv6 address, which TLS checks against a certificate's addresses rather than SNI names.
    fileprivate var isIPAddress: Bool {
        (try? SocketAddress(ipAddress: self, port: 0)) != nil
    }
}
