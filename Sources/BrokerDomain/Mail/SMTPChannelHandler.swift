import NIOCore
import NIOSSL

/// Frames an SMTP server's replies and answers the exchanges written into the channel in turn; starts TLS in
/// place after `STARTTLS`; and fails everything, closing the connection, at the send's deadline.
///
/// Everything here runs on the channel's event loop, which is what makes the switch to TLS safe: the reply
/// to `STARTTLS` and the TLS handler's arrival happen in one step, so no byte the server sent in clear after
/// that reply can later be read as if it had come over TLS (a man in the middle's injected replies).
final class SMTPChannelHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = SMTPExchange
    typealias OutboundOut = ByteBuffer

    /// RFC 5321 §4.5.3.1.5 allows a reply line 512 octets; more than this is not a mail server.
    static let maximumLineLength = 4096
    /// An `EHLO` reply lists a dozen extensions; a server that sends endless lines is stopped here.
    static let maximumReplyLines = 100

    private let deadline: NIODeadline
    private var timer: Scheduled<Void>?
    private var received = ByteBuffer()
    private var code: Int?
    private var lines: [String] = []
    private var waiting = CircularBuffer<SMTPExchange>()
    private var failure: (any Error)?
    /// The greeting, when it came before the exchange that waits for it was written (the server speaks
    /// first, as soon as the connection is up); no other reply may come unasked.
    private var greeting: SMTPReply?
    private var replied = false

    /// Where the first failure is also kept for the sending task (`SMTPFirstFailure`).
    private let firstFailure: SMTPFirstFailure

    init(deadline: NIODeadline, firstFailure: SMTPFirstFailure) {
        self.deadline = deadline
        self.firstFailure = firstFailure
    }

    func handlerAdded(context: ChannelHandlerContext) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            fail(SMTPChannelFailure.timedOut)
            context.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        fail(SMTPChannelFailure.closed)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let exchange = unwrapOutboundIn(data)
        if let failure {
            exchange.reply.fail(failure)
            promise?.fail(failure)
            return
        }
        if exchange.bytes == nil, let greeting {
            self.greeting = nil
            exchange.reply.succeed(greeting)
            promise?.succeed(())
            return
        }
        waiting.append(exchange)
        if let bytes = exchange.bytes {
            context.write(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: promise)
        } else {
            promise?.succeed(())
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        received.writeBuffer(&bytes)
        do {
            try deliverReplies(context: context)
        } catch {
            fail(error)
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(SMTPChannelFailure.closed)
        context.fireChannelInactive()
    }

    private func deliverReplies(context: ChannelHandlerContext) throws {
        while let end = received.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            var line = received.readBytes(length: end - received.readableBytesView.startIndex + 1)!
            line.removeLast()
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            guard line.count <= Self.maximumLineLength else { throw SMTPChannelFailure.protocolViolation("a reply line is too long") }
            try take(line, context: context)
        }
        guard received.readableBytes <= Self.maximumLineLength else { throw SMTPChannelFailure.protocolViolation("a reply line is too long") }
        received.discardReadBytes()
    }

    /// One line `DDD-text` (more follow) or `DDD text` (the last).
    private func take(_ line: [UInt8], context: ChannelHandlerContext) throws {
        let digits = line.prefix(3)
        guard digits.count == 3, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let code = Int(String(decoding: digits, as: UTF8.self)), (200...599).contains(code)
        else { throw SMTPChannelFailure.protocolViolation("the server's answer is not an SMTP reply") }
        let separator = line.count > 3 ? line[3] : UInt8(ascii: " ")
        guard separator == UInt8(ascii: " ") || separator == UInt8(ascii: "-") else {
            throw SMTPChannelFailure.protocolViolation("the server's answer is not an SMTP reply")
        }
        guard self.code == nil || self.code == code else {
            throw SMTPChannelFailure.protocolViolation("the lines of one reply have different codes")
        }
        self.code = code
        lines.append(String(decoding: line.dropFirst(4), as: UTF8.self))
        guard lines.count <= Self.maximumReplyLines else { throw SMTPChannelFailure.protocolViolation("a reply has too many lines") }
        guard separator == UInt8(ascii: " ") else { return }

        let reply = SMTPReply(code: code, lines: lines)
        self.code = nil
        lines = []
        defer { replied = true }
        // This client never pipelines: a reply with no exchange waiting is one the server was not asked for,
        // unless it is the greeting.
        guard let exchange = waiting.popFirst() else {
            guard !replied else { throw SMTPChannelFailure.protocolViolation("the server answered before it was asked") }
            greeting = reply
            return
        }
        if let tls = exchange.startTLS, code == 220 {
            guard received.readableBytes == 0 else {
                exchange.reply.fail(SMTPChannelFailure.protocolViolation("the server sent more in clear after agreeing to STARTTLS"))
                throw SMTPChannelFailure.protocolViolation("the server sent more in clear after agreeing to STARTTLS")
            }
            let handler = try NIOSSLClientHandler(context: tls, serverHostname: exchange.serverHostname)
            try context.pipeline.syncOperations.addHandler(handler, position: .first)
        }
        exchange.reply.succeed(reply)
    }

    /// Fails every waiting exchange, and every later one, with the first failure.
    private func fail(_ error: any Error) {
        let failure = self.failure ?? error
        if self.failure == nil { firstFailure.record(failure) }
        self.failure = failure
        timer?.cancel()
        timer = nil
        while let exchange = waiting.popFirst() { exchange.reply.fail(failure) }
    }
}
