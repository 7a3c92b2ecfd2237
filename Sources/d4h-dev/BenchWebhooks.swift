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
                    try await api.send(.PUT, "/v1/webhook", token: token, json: ["url": receiverURL, "secret": secret], expecting: 200)

                    let outbox = try await measureOutbox(company: company.id, tally: tally, logger: logger)
                    let outboxCounts = tally.reset()
                    try await api.send(.DELETE, "/v1/webhook", token: token, json: nil, expecting: 204)
                    let direct = try await measureDirect(http: http, receiverURL: receiverURL, secret: secret, tally: tally)
                    let directCounts = tally.reset()

                    print("## Webhook delivery (\(events) events for one third party to a local receiver)")
                    print("| path | events | seconds | events/s | ratio to direct POSTs |")
                    print("|---|---:|---:|---:|---:|")
                    for (name, seconds) in [
                        ("outbox → delivery loop → receiver (queue, claim, sign, POST, record)", outbox),
                        ("signed POSTs straight to the receiver, \(concurrency) at a time (baseline)", direct),
                    ] {
                        print(
                            "| \(name) | \(events) | \(String(format: "%.2f", seconds)) | \(Int(Double(events) / seconds)) | \(String(format: "%.2f", direct / seconds)) |"
                        )
                    }
                    print(
                        "Outbox run: \(outboxCounts.distinct) distinct events received, \(outboxCounts.total) in total, \(outboxCounts.badSignatures) bad signatures."
                    )
                    guard outboxCounts.distinct == events, outboxCounts.total == events, outboxCounts.badSignatures == 0,
                        directCounts.distinct == events
                    else { throw ValidationError("events were lost, duplicated or badly signed") }
                }
            }
        }

        /// Queues the events in one transaction, through the store the services queue them with (so they
        /// carry what a real event carries), and waits until the receiver has all of them, then a little
        /// longer to catch duplicates. Returns the seconds from the commit that makes them visible to the
        /// delivery loop to the last arrival.
        func measureOutbox(company: UUID, tally: ReceiverTally, logger: Logger) async throws -> Double {
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
            try await Task.sleep(for: .seconds(2))
            return seconds.inSeconds
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

/// What the bench receiver saw: distinct event ids, all requests, and signatures that did not verify.
final class ReceiverTally: Sendable {
    struct Counts { var distinct, total, badSignatures: Int }
    private struct State {
        var ids = Set<String>()
        var total = 0
        var badSignatures = 0
        var lastArrival: ContinuousClock.Instant?
    }

    let secret: String
    private let state = Mutex(State())

    init(secret: String) { self.secret = secret }

    func record(eventID: String?, signatureValid: Bool) {
        state.withLock {
            if let eventID { $0.ids.insert(eventID) }
            $0.total += 1
            if !signatureValid { $0.badSignatures += 1 }
            $0.lastArrival = .now
        }
    }

    func counts() -> Counts { state.withLock { Counts(distinct: $0.ids.count, total: $0.total, badSignatures: $0.badSignatures) } }
    func lastArrival() -> ContinuousClock.Instant? { state.withLock { $0.lastArrival } }

    /// The counts so far, and a fresh start.
    func reset() -> Counts {
        state.withLock {
            let counts = Counts(distinct: $0.ids.count, total: $0.total, badSignatures: $0.badSignatures)
            $0 = State()
            return counts
        }
    }
}

/// A webhook receiver on a loopback port that verifies every signature, as a third party's would.
enum BenchReceiver {
    static func run(tally: ReceiverTally, logger: Logger, _ body: @Sendable (String) async throws -> Void) async throws {
        let router = Router()
        router.post("/hook") { request, _ -> HTTPResponse.Status in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            let signature = request.headers[HTTPField.Name(WebhookSignature.headerName)!] ?? ""
            tally.record(
                eventID: request.headers[HTTPField.Name(WebhookSignature.eventIDHeaderName)!],
                signatureValid: WebhookSignature.verify(header: signature, body: bytes.readableBytesView, secret: tally.secret))
            return .noContent
        }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { portContinuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw ValidationError("the bench receiver did not start") }
            do {
                try await body("http://127.0.0.1:\(port)/hook")
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}

/// A third party created for the bench through the real registration and activation path.
enum BenchCompany {
    struct Company: Sendable {
        var id: UUID
        var email: String
        var password: String
    }

    static func create(name: String = "Bench S.r.l.", prefix: String = "company", client: DatabasePool, logger: Logger) async throws -> Company {
        let mailer = CapturingMailer()
        let service = try await AccountService.standalone(client: client, mailer: mailer, publicURL: "http://127.0.0.1")
        let email = "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())@bench.data4help.example"
        let password = "bench-company-password"
        let first10 = "1" + String((0..<9).map { _ in "0123456789".randomElement()! })
        _ = try await service.register(
            AccountService.ThirdPartyRegistration(
                email: email, password: password, vatNumber: first10 + String(VATNumber.checkDigit(for: first10)!),
                companyName: name, description: nil), logger: logger)
        let account = try await service.activate(token: mailer.activationToken(for: email) ?? "", password: nil, logger: logger)
        return Company(id: account.id, email: email, password: password)
    }
}

/// JSON calls to the server under test.
struct BenchAPI {
    let http: HTTPClient
    let base: String

    func logIn(email: String, password: String) async throws -> String {
        let body = try await send(.POST, "/v1/sessions", token: nil, json: ["email": email, "password": password], expecting: 201)
        guard let token = (try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["token"] as? String else {
            throw ValidationError("login answered no token")
        }
        return token
    }

    @discardableResult
    func send(_ method: HTTPMethod, _ path: String, token: String?, json: [String: String]?, expecting status: UInt) async throws -> [UInt8] {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json)))
        }
        let response = try await http.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status.code == status else {
            throw ValidationError("\(method) \(path) answered \(response.status.code): \(String(buffer: body))")
        }
        return Array(body.readableBytesView)
    }
}

extension Duration {
    fileprivate var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
