import NIOCore
import Synchronization

/// The first failure `SMTPChannelHandler` saw on one connection, kept where the sending task can read it.
///
/// A failure that closes the connection (a certificate that does not verify, say) reaches the exchange
/// waiting for a reply through the handler. But the send's next exchange may be written only after the
/// channel has closed, and a write on a closed channel fails before it reaches any handler, with "I/O on
/// closed channel": without this, a man in the middle's certificate was sometimes reported as a connection
/// the server closed (temporary, retried) instead of a TLS failure (permanent).
final class SMTPFirstFailure: Sendable {
    private let first = Mutex<(any Error)?>(nil)

    func record(_ error: any Error) {
        first.withLock { $0 = $0 ?? error }
    }

    /// `error`, or the failure that closed the connection when `error` only says that it is closed.
    func explaining(_ error: any Error) -> any Error {
        switch error {
        case ChannelError.ioOnClosedChannel, ChannelError.alreadyClosed, ChannelError.eof, SMTPChannelFailure.closed:
            return first.withLock { $0 } ?? error
        default:
            return error
        }
    }
}
