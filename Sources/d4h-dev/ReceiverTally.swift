import ArgumentParser
import AsyncHTTPClient
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// What the bench receiver saw: distinct event ids, all requests, and signatures that did not verify.
final class ReceiverTally: Sendable {
    struct Counts { var distinct, total, badSignatures, connections: Int }
    private struct State {
        var ids = Set<String>()
        var total = 0
        var badSignatures = 0
        /// The senders' ends (address and port) of the connections the requests came on.
        var connections = Set<String>()
        var firstArrival: ContinuousClock.Instant?
        var lastArrival: ContinuousClock.Instant?
    }

    let secret: String
    private let state = Mutex(State())

    init(secret: String) { self.secret = secret }

    func record(eventID: String?, signatureValid: Bool, connection: String) {
        state.withLock {
            $0.connections.insert(connection)
            if let eventID { $0.ids.insert(eventID) }
            $0.total += 1
            if !signatureValid { $0.badSignatures += 1 }
            let now = ContinuousClock.now
            if $0.firstArrival == nil { $0.firstArrival = now }
            $0.lastArrival = now
        }
    }

    func counts() -> Counts { state.withLock { Self.counts($0) } }
    func lastArrival() -> ContinuousClock.Instant? { state.withLock { $0.lastArrival } }
    func firstArrival() -> ContinuousClock.Instant? { state.withLock { $0.firstArrival } }

    /// The counts so far, and a fresh start.
    func reset() -> Counts {
        state.withLock {
            let counts = Self.counts($0)
            $0 = State()
            return counts
        }
    }

    private static func counts(_ state: State) -> Counts {
        Counts(distinct: state.ids.count, total: state.total, badSignatures: state.badSignatures, connections: state.connections.count)
    }
}
