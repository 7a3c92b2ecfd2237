import Foundation
import Logging
import PostgresNIO

/// Slows password guessing: after `maxFailures` failed logins for one email, or from one client address,
/// within `window`, further attempts get 429 until the oldest of those failures ages out.
/// Kept in the database, so the limit holds across server instances.
public struct LoginThrottle: Sendable {
    public let client: DatabasePool
    public var maxFailures = 5
    public var windowSeconds = 15 * 60

    public init(client: DatabasePool) { self.client = client }

    /// Seconds to wait before trying again, or nil when an attempt is allowed now.
    public func retryAfter(email: String, clientAddress: String, logger: Logger) async throws -> Int? {
        let rows = try await client.query(
            """
            WITH recent AS (
                SELECT at, email = \(email) AS by_email, client_address = \(clientAddress) AS by_address
                FROM failed_logins
                WHERE (email = \(email) OR client_address = \(clientAddress))
                  AND at > now() - make_interval(secs => \(windowSeconds))
            ), ranked AS (
                SELECT (SELECT at FROM recent WHERE by_email ORDER BY at DESC OFFSET \(maxFailures - 1) LIMIT 1) AS email_gate,
                       (SELECT at FROM recent WHERE by_address ORDER BY at DESC OFFSET \(maxFailures - 1) LIMIT 1) AS address_gate
            )
            SELECT ceil(extract(epoch FROM greatest(email_gate, address_gate)
                        + make_interval(secs => \(windowSeconds)) - now()))::int8
            FROM ranked
            """, logger: logger)
        guard let seconds = try await rows.collect().first?.decode(Int64?.self) else { return nil }
        return max(1, Int(seconds))
    }

    public func recordFailure(email: String, clientAddress: String, logger: Logger) async throws {
        try await client.query(
            """
            WITH expired AS (DELETE FROM failed_logins WHERE at < now() - make_interval(secs => \(windowSeconds)))
            INSERT INTO failed_logins (email, client_address) VALUES (\(email), \(clientAddress))
            """, logger: logger)
    }

    /// A successful login forgives the email's failures (not the address's: one address may try many emails).
    public func clearFailures(email: String, logger: Logger) async throws {
        try await client.query("DELETE FROM failed_logins WHERE email = \(email)", logger: logger)
    }
}
