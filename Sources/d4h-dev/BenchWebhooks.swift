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

extension Bench {
    struct Webhooks: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Events per second from the webhook outbox to a local receiver, against the same signed POSTs sent straight to it.")

        @Option(help: "The server to measure (it must run with WEBHOOK_ALLOW_PRIVATE=true).") var url = "http://127.0.0.1:8080"
        @Option(help: "The server's database (to create the bench company and queue the events).") var databaseURL: String
        @Option(help: "Events to deliver.") var events = 10_000
        @Option(help: "Concurrent POSTs of the baseline (the server's default per third party).") var concurrency = 8
        @Option(help: "Alternated rounds of the outbox and the baseline; the median ratio is reported.") var rounds = 3

        func validate() throws {
            guard events >= 1, concurrency >= 1, rounds >= 1 else { throw ValidationError("--events, --concurrency and --rounds must be at least 1") }
        }

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let secret = "bench-webhook-secret-" + UUID().uuidString
            let tally = ReceiverTally(secret: secret)
            try await BenchReceiver.run(tally: tally, logger: logger) { receiverURL in
                let company = try await withDatabase(url: databaseURL, logger: logger) { client in
                    try await BenchCompany.create(name: "Webhook Bench S.r.l.", prefix: "webhooks", client: client, logger: logger)
                }
                try await HTTPClient.withHTTPClient { http in
                    let api = BenchAPI(http: http, base: url)
                    let token = try await api.logIn(email: company.email, password: company.password)
                    // Alternated rounds, each the outbox then the baseline: the machine's pace drifts (the baseline
                    // alone ranged 11,000-22,000 POSTs a second between runs), and each ratio is taken within a round.
                    var ratios: [Double] = []
                    print("## Webhook delivery (\(events) events for one third party to a local receiver, \(rounds) alternated rounds)")
                    print("| round | path | seconds | events/s | ratio to direct POSTs |")
                    print("|---:|---|---:|---:|---:|")
                    for round in 1...rounds {
                        try await api.send(.PUT, "/v1/webhook", token: token, json: ["url": receiverURL, "secret": secret], expecting: 200)
                        let (outbox, outboxFirstArrival) = try await measureOutbox(company: company.id, tally: tally, logger: logger)
                        let outboxCounts = tally.reset()
                        try await api.send(.DELETE, "/v1/webhook", token: token, json: nil, expecting: 204)
                        let direct = try await measureDirect(http: http, receiverURL: receiverURL, secret: secret, tally: tally)
                        let directCounts = tally.reset()
                        guard outboxCounts.distinct == events, outboxCounts.total == events, outboxCounts.badSignatures == 0,
                            directCounts.distinct == events
                        else {
                            throw ValidationError(
                                "events were lost, duplicated or badly signed: \(outboxCounts.distinct) distinct of \(events), \(outboxCounts.total) in total, \(outboxCounts.badSignatures) bad signatures"
                            )
                        }
                        ratios.append(direct / outbox)
                        // The loop finds a burst within `idleProbeInterval` (100 ms) of the commit: its pace once
                        // delivering, from the first arrival to the last, is beside the figure from the commit.
                        let pace =
                            outboxFirstArrival.flatMap { wait in outbox > wait ? wait : nil }.map { wait in
                                " (from its first arrival, \(String(format: "%.2f", wait)) s after the commit: \(Int(Double(events - 1) / (outbox - wait)))/s)"
                            } ?? ""
                        print(
                            "| \(round) | outbox → delivery loop → receiver (queue, claim, sign, POST, record)\(pace); \(outboxCounts.connections) connections | \(String(format: "%.2f", outbox)) | \(Int(Double(events) / outbox)) | \(String(format: "%.2f", direct / outbox)) |"
                        )
                        print(
                            "| \(round) | signed POSTs straight to the receiver, \(concurrency) at a time (baseline); \(directCounts.connections) connections | \(String(format: "%.2f", direct)) | \(Int(Double(events) / direct)) | 1.00 |"
                        )
                    }
                    let sorted = ratios.sorted()
                    let median = sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
                    print(
                        "Median ratio over the \(rounds) rounds: \(String(format: "%.2f", median)) (lowest \(String(format: "%.2f", sorted.first!)), highest \(String(format: "%.2f", sorted.last!)))."
                    )
                }
            }
        }

        /// Queues the events in one transaction, through the store the services queue them with (so they
        /// carry what a real event carries), and waits until the receiver has all of them, then a little
        /// longer to catch duplicates. Returns the seconds from the commit that makes them visible to the
        /// delivery loop to the last arrival, and to the first.
        func measureOutbox(company: UUID, tally: ReceiverTally, logger: Logger) async throws -> (Double, Double?) {
            let events = events
            let start = try await withDatabase(url: databaseURL, logger: logger) { client in
                try await client.withTransaction(logger: logger) { connection in
                    for n in 1...events {
                        try await WebhookOutboxStore.enqueue(
                            .singleRequestAccepted, to: company, requestID: UUID(), data: ["n": String(n)], on: connection, logger: logger)
                    }
                    // The events become visible when this returns and the transaction commits.
                    return ContinuousClock.now
                }
            }
            let deadline = ContinuousClock.now + .seconds(600)
            while tally.counts().distinct < events {
                guard ContinuousClock.now < deadline else {
                    throw ValidationError("only \(tally.counts().distinct) of \(events) events arrived in 10 minutes")
                }
                try await Task.sleep(for: .milliseconds(5))
            }
            let seconds = (tally.lastArrival() ?? .now) - start
            let first = tally.firstArrival().map { ($0 - start).inSeconds }
            try await Task.sleep(for: .seconds(2))
            return (seconds.inSeconds, first)
        }

        /// The same bodies, signed the same way, posted by this process with `concurrency` workers.
        func measureDirect(http: HTTPClient, receiverURL: String, secret: String, tally: ReceiverTally) async throws -> Double {
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<concurrency {
                    group.addTask {
                        for n in stride(from: worker + 1, through: events, by: concurrency) {
                            let id = UUID().uuidString.lowercased()
                            let body = Array(
                                #"{"id":"\#(id)","type":"single_request.accepted","createdAt":"\#(Timestamp.rfc3339(Date()))","data":{"n": \#(n)}}"#
                                    .utf8)
                            var request = HTTPClientRequest(url: receiverURL)
                            request.method = .POST
                            request.headers.add(name: "Content-Type", value: "application/json")
                            request.headers.add(name: WebhookSignature.eventIDHeaderName, value: id)
                            request.headers.add(
                                name: WebhookSignature.headerName,
                                value: WebhookSignature.header(body: body, secret: secret, timestamp: Int(Date().timeIntervalSince1970)))
                            request.body = .bytes(ByteBuffer(bytes: body))
                            let response = try await http.execute(request, timeout: .seconds(10))
                            _ = try await response.body.collect(upTo: 64 * 1024)
                        }
                    }
                }
                try await group.waitForAll()
            }
            return (ContinuousClock.now - start).inSeconds
        }
    }
}
