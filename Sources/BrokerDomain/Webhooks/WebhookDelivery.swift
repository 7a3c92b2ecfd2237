import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO
import ServiceLifecycle

/// The webhook delivery loop, run by every server instance: claims due events from the outbox, posts
/// them signed to the third party's URL, and records each attempt. State lives only in the database
/// (leases, attempt counts), so any instance picks up what a stopped or crashed one left.
package struct WebhookDelivery: Service {
    package init(
        client: DatabasePool, policy: WebhookURLPolicy, configuration: WebhookDeliveryConfiguration, logger: Logger, clock: WallClock = .system
    ) {
        self.clock = clock
        self.client = client
        self.policy = policy
        self.configuration = configuration
        self.logger = logger
    }

    let client: DatabasePool
    let policy: WebhookURLPolicy
    let configuration: WebhookDeliveryConfiguration
    let logger: Logger
    /// The time a delivery's signature carries.
    let clock: WallClock

    package func run() async throws {
        var http = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: Self.timeAmount(configuration.connectTimeout), read: Self.timeAmount(configuration.requestTimeout)))
        // A failed connection is an attempt like any other and is retried with backoff; the client's own
        // connection retries would only stretch the attempt until the timeout.
        http.connectionPool.retryConnectionEstablishment = false
        // The pool limits connections per host, and several third parties may share a host (a hosted
        // webhook relay): a per-host limit below ours would queue one party's posts behind another's
        // hanging ones. The loop already bounds how many posts are in flight.
        http.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = configuration.maxInFlight
        let httpClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: http)
        await deliverUntilShutdown(with: httpClient)
        try? await httpClient.shutdown()
    }

    private enum Wake: Sendable {
        case finished(thirdPartyID: UUID)
        case tick
    }

    /// Claims while there are free slots and due events, otherwise sleeps one poll interval. On graceful
    /// shutdown it stops claiming and lets the posts in flight finish (each bounded by the request
    /// timeout); on cancellation they are abandoned and their events claimed again when the lease ends.
    private func deliverUntilShutdown(with http: HTTPClient) async {
        await withTaskGroup(of: Wake.self) { group in
            var inFlight: [UUID: Int] = [:]
            var total = 0
            var ticking = false
            var moreDue = true
            // Claiming is one transaction on the loop's path; claiming after every single finished post
            // would cap throughput at one event per round trip. After a backlog has been found, claim
            // again once half a third party's share of posts is done (or everything is, or a poll tick).
            let refill = max(1, configuration.maxInFlightPerThirdParty / 2)
            var finishedSinceClaim = 0
            while !Task.isCancelled, !Task.isShuttingDownGracefully {
                let free = configuration.maxInFlight - total
                if moreDue, free > 0 {
                    finishedSinceClaim = 0
                    do {
                        // While the database is down a claim waits for a pool connection until the pool gives
                        // up (about a minute); shutting down must not wait for that.
                        let claimed = try await cancelWhenGracefulShutdown { [inFlight] in
                            try await client.withConnection { connection in
                                try await WebhookDeliveryStore.claim(
                                    limit: free, perThirdParty: configuration.maxInFlightPerThirdParty, inFlight: inFlight,
                                    lease: configuration.lease, on: connection, logger: logger)
                            }
                        }
                        for event in claimed {
                            inFlight[event.thirdPartyID, default: 0] += 1
                            total += 1
                            group.addTask {
                                await deliver(event, with: http)
                                return .finished(thirdPartyID: event.thirdPartyID)
                            }
                        }
                        // Fewer than asked: nothing else is due, or only events of parties at their cap.
                        moreDue = claimed.count == free
                    } catch {
                        // The database may be down or restarting; try again after a poll interval. A claim cut
                        // short by the shutdown is no failure.
                        if !Task.isShuttingDownGracefully {
                            logger.warning("claiming webhook events failed", metadata: ["error": "\(String(reflecting: error))"])
                        }
                        moreDue = false
                    }
                }
                if !moreDue, !ticking {
                    ticking = true
                    let interval = configuration.pollInterval
                    group.addTask {
                        await cancelWhenGracefulShutdown { try? await Task.sleep(for: interval) }
                        return .tick
                    }
                }
                switch await group.next() {
                case .finished(let party):
                    total -= 1
                    inFlight[party, default: 1] -= 1
                    if inFlight[party] == 0 { inFlight[party] = nil }
                    finishedSinceClaim += 1
                    // Slots (and that party's budget) are free again: its next events may be waiting.
                    if finishedSinceClaim >= refill || total == 0 { moreDue = true }
                case .tick:
                    ticking = false
                    moreDue = true
                case nil:
                    moreDue = true
                }
            }
        }
    }

    /// Posts one event and records the attempt; never throws (a failure is an attempt's outcome).
    private func deliver(_ event: WebhookDeliveryStore.ClaimedEvent, with http: HTTPClient) async {
        let start = ContinuousClock.now
        var outcome = await post(event, with: http)
        let elapsed = ContinuousClock.now - start
        outcome.durationMs = Int(elapsed.inSeconds * 1000)
        let metadata: Logger.Metadata = [
            "webhook.event.id": "\(event.id)", "webhook.event.type": "\(event.type)", "webhook.attempt": "\(event.attempt)",
            "account.id": "\(event.thirdPartyID)", "http.status": "\(outcome.statusCode.map(String.init) ?? "-")",
            "duration.ms": "\(outcome.durationMs)",
        ]
        if outcome.delivered {
            logger.debug("webhook delivered", metadata: metadata)
        } else {
            logger.info("webhook attempt failed", metadata: metadata.merging(["error": "\(outcome.error ?? "")"]) { $1 })
        }
        do {
            try await client.withConnection { connection in
                try await WebhookDeliveryStore.record(
                    event, outcome: outcome, retryDelay: configuration.retryDelay(afterAttempt: event.attempt),
                    horizon: configuration.retryHorizon, on: connection, logger: logger)
            }
        } catch {
            // The lease runs out and the event is claimed again: at least once, never lost.
            logger.warning("recording a webhook attempt failed", metadata: metadata.merging(["error": "\(String(reflecting: error))"]) { $1 })
        }
    }

    private func post(_ event: WebhookDeliveryStore.ClaimedEvent, with http: HTTPClient) async -> WebhookDeliveryStore.Outcome {
        func failure(_ why: String, status: Int? = nil) -> WebhookDeliveryStore.Outcome {
            WebhookDeliveryStore.Outcome(delivered: false, statusCode: status, error: why, durationMs: 0)
        }
        guard let url = event.url, let secret = event.secret else { return failure("no webhook is registered") }
        // Again at every delivery: the host may resolve elsewhere now than at registration.
        if case .failure(let rejection) = await policy.check(url) { return failure("not sent: the url \(rejection.message)") }
        let body = Self.body(of: event)
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Data4Help-Webhooks/1")
        request.headers.add(name: WebhookSignature.eventIDHeaderName, value: event.id.uuidString.lowercased())
        request.headers.add(
            name: WebhookSignature.headerName,
            value: WebhookSignature.header(body: body, secret: secret, timestamp: Int(clock.now.timeIntervalSince1970)))
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await http.execute(
                request, deadline: .now() + Self.timeAmount(configuration.requestTimeout), logger: logger)
            // Read (and drop) a small answer, so the connection can carry the next delivery.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            let code = Int(response.status.code)
            if (200..<300).contains(code) {
                return WebhookDeliveryStore.Outcome(delivered: true, statusCode: code, error: nil, durationMs: 0)
            }
            let redirect = (300..<400).contains(code) ? " (redirects are not followed)" : ""
            return failure("the receiver answered \(code)\(redirect)", status: code)
        } catch {
            return failure(Self.describe(error))
        }
    }

    /// `{"id", "type", "createdAt", "data"}`; `data` is the stored JSON, copied as it is.
    static func body(of event: WebhookDeliveryStore.ClaimedEvent) -> [UInt8] {
        let type = (try? JSONEncoder().encode(event.type)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
        let text =
            #"{"id":"\#(event.id.uuidString.lowercased())","type":\#(type),"createdAt":"\#(Timestamp.rfc3339(event.createdAt))","data":\#(event.data)}"#
        return Array(text.utf8)
    }

    /// A short reason for an attempt's record; it never contains the body or the secret.
    static func describe(_ error: any Error) -> String {
        if let client = error as? HTTPClientError {
            switch client {
            case .deadlineExceeded, .readTimeout, .writeTimeout: return "timed out"
            case .connectTimeout: return "timed out connecting"
            case .remoteConnectionClosed: return "the receiver closed the connection"
            default: return "HTTP error: \(client)"
            }
        }
        return "could not deliver: \(error)"
    }

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(Int64(duration.inSeconds * 1_000_000_000))
    }
}
