import Foundation

/// A mail transport failed; the outbox retries the mail later, or sets it aside when the failure is permanent.
///
/// `permanent` tells a delivery loop what to do with the mail: a temporary failure (a 4xx reply, a server that
/// cannot be reached or does not answer in time, a mail program that hung or exited with `EX_TEMPFAIL`) is
/// worth trying again later; a permanent one (a 5xx reply, a refused password, a certificate that does not
/// verify, a server that will not start TLS, a missing mail program) fails the same way every time until an
/// operator changes something, so the mail is set aside instead of retried.
///
/// The description names the step and the server's reply, never the password, the recipient or the body: it
/// is written to logs.
package struct MailDeliveryError: Error, CustomStringConvertible, Sendable {
    /// What failed.
    package enum Kind: String, Sendable {
        /// The server could not be reached, or closed the connection.
        case connection
        /// TLS could not be started: not offered, a failed handshake, a certificate that does not verify.
        case tls
        /// The server refused the user name and password (or offers no mechanism this client speaks).
        case authentication
        /// The server refused the mail: the sender, the recipient or the message.
        case rejected
        /// The server, or the mail program, did not finish within the configured bound.
        case timeout
        /// The server answered something that is not SMTP, or not in turn.
        case protocolViolation
        /// The mail program could not be started or exited with a failure.
        case mailProgram
        /// The recipient's address cannot be put into an SMTP command.
        case address
    }

    package let kind: Kind
    package let permanent: Bool
    package let description: String

    package init(_ kind: Kind, permanent: Bool, _ description: String) {
        self.kind = kind
        self.permanent = permanent
        self.description = description
    }
}
