import NIOCore
import NIOSSL

/// One step of an SMTP conversation, written into the channel: the bytes to send (none for the server's
/// greeting, which comes unasked) and the promise of the server's reply to them.
struct SMTPExchange: Sendable {
    var bytes: [UInt8]?
    /// Start TLS with this context, in place, when the reply is 220 (the exchange is `STARTTLS`).
    var startTLS: NIOSSLContext?
    /// The name the server's certificate must hold; nil when the host is an IP address, which NIOSSL then
    /// checks against the certificate's IP addresses instead (an address cannot go into SNI).
    var serverHostname: String?
    var reply: EventLoopPromise<SMTPReply>
}
