import Foundation
import NIOSSL

/// Where and how `SMTPMailer` submits mail (`SMTP_*`, read and checked by the server's configuration).
package struct SMTPSettings: Sendable {
    /// How the connection is protected.
    package enum Security: String, Sendable {
        /// Plain TCP, then `STARTTLS` before anything else is sent; a server that does not offer it is refused
        /// (the default, port 587: a stripped `STARTTLS` must not turn into a password sent in clear).
        case starttls
        /// TLS from the first byte (port 465).
        case implicit
        /// No TLS at all: for a sink on the loopback interface only (the configuration refuses anything else),
        /// and never with a password.
        case none
    }

    /// The submission account. The password is never part of a description, so it cannot reach a log.
    package struct Credentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
        package var username: String
        package var password: String

        package init(username: String, password: String) {
            self.username = username
            self.password = password
        }

        package var description: String { "\(username) (password not shown)" }
        package var debugDescription: String { description }
    }

    package var host: String
    package var port: Int
    package var security: Security
    package var credentials: Credentials?
    /// The certificates a server's chain must lead to; nil trusts the system's roots.
    package var trustRoots: [NIOSSLCertificate]?
    /// The bound on one whole send: connecting, every reply, the message, `QUIT`.
    package var timeout: Duration

    package init(
        host: String, port: Int? = nil, security: Security = .starttls, credentials: Credentials? = nil,
        trustRoots: [NIOSSLCertificate]? = nil, timeout: Duration = .seconds(30)
    ) {
        self.host = host
        self.port = port ?? (security == .implicit ? 465 : 587)
        self.security = security
        self.credentials = credentials
        self.trustRoots = trustRoots
        self.timeout = timeout
    }
}
