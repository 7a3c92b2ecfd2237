import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore

/// A webhook receiver on a loopback port: records every POST to `/hook/<name>`, and can be told to
/// answer 500 to the first N requests of a name, or to hang until released.
struct WebhookReceiver: Sendable {
    let port: Int
    let log: Log

    struct Received: Sendable {
        var name: String
        var eventID: String?
        var signature: String?
        var contentType: String?
        var body: Data
        var status: Int
        var at: ContinuousClock.Instant
    }

    actor Log {
        private(set) var received: [Received] = []
        private var failuresLeft: [String: Int] = [:]
        private var hanging: Set<String> = []
        /// Per name, the number of requests answered before the rest hang.
        private var hangingAfter: [String: Int] = [:]
        private var arrivals: [String: Int] = [:]

        func fail(_ name: String, times: Int) { failuresLeft[name] = times }
        func hang(_ name: String) { hanging.insert(name) }
        /// The first `count` requests of `name` are answered, every later one hangs (until released).
        func hang(_ name: String, after count: Int) { hangingAfter[name] = count }
        func release(_ name: String) {
            hanging.remove(name)
            hangingAfter[name] = nil
        }
        func releaseAll() {
            hanging.removeAll()
            hangingAfter.removeAll()
        }
        /// Whether the `arrival`th request of `name` (1-based) is to hang now.
        func isHanging(_ name: String, arrival: Int) -> Bool {
            hanging.contains(name) || hangingAfter[name].map { arrival > $0 } == true
        }
        /// Counts a request's arrival; its number among `name`'s requests.
        func arrive(_ name: String) -> Int {
            arrivals[name, default: 0] += 1
            return arrivals[name, default: 0]
        }
        /// Requests of `name` that arrived, answered or not (a hanging one counts).
        func arrived(_ name: String) -> Int { arrivals[name] ?? 0 }

        /// The status to answer this request with (and records it).
        func answer(_ request: Received) -> Int {
            var request = request
            let left = failuresLeft[request.name] ?? 0
            request.status = left > 0 ? 500 : 200
            if left > 0 { failuresLeft[request.name] = left - 1 }
            received.append(request)
            return request.status
        }

        /// Requests of `name` answered 2xx, in order.
        func delivered(_ name: String? = nil) -> [Received] {
            received.filter { (name == nil || $0.name == name) && $0.status == 200 }
        }

        func all(_ name: String? = nil) -> [Received] { received.filter { name == nil || $0.name == name } }
    }

    func url(_ name: String) -> String { "http://127.0.0.1:\(port)/hook/\(name)" }

    static func run(_ body: @Sendable (WebhookReceiver) async throws -> Void) async throws {
        let log = Log()
        let router = Router()
        router.post("/hook/{name}") { request, context -> Response in
            let name = context.parameters.get("name") ?? ""
            let bytes = try await request.body.collect(upTo: 1 << 20)
            let arrival = await log.arrive(name)
            // A hanging receiver accepts the connection and never answers (until released or 30 s).
            let start = ContinuousClock.now
            while await log.isHanging(name, arrival: arrival), ContinuousClock.now - start < .seconds(30) {
                try await Task.sleep(for: .milliseconds(20))
            }
            let status = await log.answer(
                Received(
                    name: name, eventID: request.headers[HTTPField.Name("Data4Help-Event-Id")!],
                    signature: request.headers[HTTPField.Name("Data4Help-Signature")!],
                    contentType: request.headers[.contentType], body: Data(buffer: bytes), status: 0, at: .now))
            return Response(status: .init(code: status))
        }
        var logger = Logger(label: "webhook-receiver")
        logger.logLevel = .warning
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
        try await LiveServer.run(app) { port in
            let receiver = WebhookReceiver(port: port, log: log)
            do {
                try await body(receiver)
            } catch {
                await log.releaseAll()
                throw error
            }
            await log.releaseAll()
        }
    }
}

/// Waits until `condition` holds (an error counts as not yet), checking every 50 ms; false when
/// `timeout` passes first.
func eventually(timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if (try? await condition()) == true { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return (try? await condition()) == true
}
