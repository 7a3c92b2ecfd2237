import Foundation

/// Sends mail; implementations are the configured transports.
package protocol Mailer: Sendable {
    func send(_ mail: OutgoingMail) async throws
}
