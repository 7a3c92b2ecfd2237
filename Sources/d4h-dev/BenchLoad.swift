import ArgumentParser
import AsyncHTTPClient
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

extension Bench {
    /// `make loadtest`: a mixed workload from many concurrent clients against one running server, for a
    /// fixed time. Every client loops over one kind of call; each call's latency and outcome is recorded
    /// per endpoint. Anything but the expected status is an error (goal: none).
    struct Load: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "A bounded mixed workload (uploads, statistics, request lists, CSV downloads, logins); prints per-endpoint throughput, latency, errors and the server's RSS."
        )

        @Option(help: "The server under load.") var url = "http://127.0.0.1:8080"
        @Option(help: "The server's database (to create the load's accounts).") var databaseURL: String
        @Option(help: "The server's process id, to sample its resident memory (0: do not sample).") var serverPid: Int32 = 0
        @Option(help: "Seconds of load.") var duration = 90
        @Option(help: "Clients uploading 1,000-sample batches, one person each.") var uploaders = 6
        @Option(help: "Clients reading daily statistics.") var statisticsReaders = 6
        @Option(help: "Clients listing requests (third party's sent list and a person's received list).") var listers = 4
        @Option(help: "Clients downloading a granted person's data as CSV.") var downloaders = 4
        @Option(help: "Clients logging in (Argon2id on every call).") var loginClients = 2
        @Option(help: "Samples each downloadable person holds (one CSV download streams them all).") var downloadRows = 10_000

        func run() async throws {
            let http = HTTPClient(
                eventLoopGroupProvider: .singleton,
                configuration: .init(connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 256)))
            do {
                try await measure(with: http)
                try await http.shutdown()
            } catch {
                try? await http.shutdown()
                throw error
            }
        }

        private func measure(with http: HTTPClient) async throws {
            let api = BenchAPI(http: http, base: url)

            print("load: creating accounts and data …")
            let fixture = try await LoadFixture.prepare(
                api: api, databaseURL: databaseURL, uploaders: uploaders, dataHolders: max(1, downloaders, statisticsReaders / 2),
                downloadRows: downloadRows)

            let memory = ResidentMemorySampler(pid: serverPid)
            let startRSS = memory.sample()
            let recorder = LoadRecorder()
            let deadline = ContinuousClock.now + .seconds(duration)
            print("load: \(duration) s of load from \(uploaders + statisticsReaders + listers + downloaders + loginClients) concurrent clients …")

            try await withThrowingTaskGroup(of: Void.self) { group in
                let calls = LoadCalls(api: api, fixture: fixture, recorder: recorder, deadline: deadline)
                for index in 0..<uploaders { group.addTask { await calls.upload(as: index) } }
                for index in 0..<statisticsReaders { group.addTask { await calls.statistics(as: index) } }
                for index in 0..<listers { group.addTask { await calls.list(as: index) } }
                for index in 0..<downloaders { group.addTask { await calls.download(as: index) } }
                for index in 0..<loginClients { group.addTask { await calls.logIn(as: index) } }
                group.addTask { await memory.sampleEvery(.seconds(10), until: deadline) }
                try await group.waitForAll()
            }

            let report = recorder.report(seconds: Double(duration))
            print()
            print(
                "## Load test (\(duration) s, \(uploaders) uploaders × 1,000 samples, \(statisticsReaders) statistics, \(listers) lists, \(downloaders) CSV downloads × \(downloadRows) rows, \(loginClients) logins)"
            )
            print()
            print("| endpoint | requests | req/s | p50 ms | p99 ms | max ms | errors |")
            print("|---|---:|---:|---:|---:|---:|---:|")
            for line in report.lines { print(line) }
            print()
            print("Errors: \(report.errors) of \(report.requests) requests.")
            for example in recorder.errorExamples() { print("  - \(example)") }
            if let startRSS, let endRSS = memory.sample() {
                let series = memory.series().map { String($0 / 1024) }.joined(separator: ", ")
                print("Server RSS: \(startRSS / 1024) MiB at start, \(endRSS / 1024) MiB at end (every 10 s: \(series) MiB).")
            }
            if report.errors > 0 { throw ExitCode(1) }
        }
    }
}

/// What the load needs before the clock starts: people with sessions, a company with granted requests.
struct LoadFixture: Sendable {
    struct Person: Sendable {
        var email: String
        var password: String
        var token: String
    }

    var uploaders: [Person]
    /// People holding `downloadRows` samples who accepted a one-off request of the company.
    var dataHolders: [Person]
    var grantedRequestIDs: [String]
    var companyToken: String

    static func prepare(api: BenchAPI, databaseURL: String, uploaders: Int, dataHolders: Int, downloadRows: Int) async throws
        -> LoadFixture
    {
        let logger = makeLogger(level: .warning)
        let (people, company) = try await withDatabase(url: databaseURL, logger: logger) { client in
            (
                try await BenchPeople.create(count: uploaders + dataHolders, client: client, logger: logger, prefix: "load"),
                try await BenchCompany.create(client: client, logger: logger)
            )
        }
        var sessions: [Person] = []
        for person in people {
            sessions.append(
                Person(email: person.email, password: person.password, token: try await api.logIn(email: person.email, password: person.password)))
        }
        let companyToken = try await api.logIn(email: company.email, password: company.password)
        let holders = Array(sessions.suffix(dataHolders))
        var requestIDs: [String] = []
        let dayStart = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 86_400).rounded(.down) * 86_400 - 30 * 86_400)
        for holder in holders {
            // One reading a minute ending a few minutes ago: statistics see ~a week of days.
            var offset = 0
            while offset < downloadRows {
                let count = min(10_000, downloadRows - offset)
                let body = LoadBodies.heartRates(count: count, start: dayStart.addingTimeInterval(Double(offset) * 60), step: 60)
                try await api.sendRaw(.POST, "/v1/me/samples", token: holder.token, body: body, expecting: 200)
                offset += count
            }
            let request = try await api.sendJSON(
                .POST, "/v1/single-requests", token: companyToken,
                json: ["subject": ["email": holder.email], "types": ["heart_rate"], "purpose": "Load test"], expecting: 201)
            guard let id = request["id"] as? String else { throw ValidationError("the request was created without an id") }
            try await api.sendRaw(.POST, "/v1/single-requests/\(id)/accept", token: holder.token, body: nil, expecting: 200)
            requestIDs.append(id)
        }
        return LoadFixture(
            uploaders: Array(sessions.prefix(uploaders)), dataHolders: holders, grantedRequestIDs: requestIDs,
            companyToken: companyToken)
    }
}

/// The calls each kind of client repeats until the deadline.
struct LoadCalls: Sendable {
    let api: BenchAPI
    let fixture: LoadFixture
    let recorder: LoadRecorder
    let deadline: ContinuousClock.Instant

    func upload(as index: Int) async {
        let person = fixture.uploaders[index % fixture.uploaders.count]
        // Each batch covers a fresh 1,000 seconds, walking back in time from now, so no sample is a duplicate.
        var end = Date().addingTimeInterval(-60)
        while ContinuousClock.now < deadline {
            end = end.addingTimeInterval(-1000)
            let body = LoadBodies.heartRates(count: 1000, start: end, step: 1)
            await recorder.call("POST /v1/me/samples (1,000 samples)") {
                try await api.sendRaw(.POST, "/v1/me/samples", token: person.token, body: body, expecting: 200)
            }
        }
    }

    func statistics(as index: Int) async {
        let person = fixture.dataHolders[index % fixture.dataHolders.count]
        let to = Timestamp.rfc3339(Date()).prefix(10)
        let from = Timestamp.rfc3339(Date().addingTimeInterval(-60 * 86_400)).prefix(10)
        let path = "/v1/me/statistics?type=heart_rate&bucket=day&from=\(from)&to=\(to)"
        while ContinuousClock.now < deadline {
            await recorder.call("GET /v1/me/statistics") {
                try await api.sendRaw(.GET, path, token: person.token, body: nil, expecting: 200)
            }
        }
    }

    func list(as index: Int) async {
        while ContinuousClock.now < deadline {
            if index.isMultiple(of: 2) {
                await recorder.call("GET /v1/single-requests (third party)") {
                    try await api.sendRaw(.GET, "/v1/single-requests?limit=100", token: fixture.companyToken, body: nil, expecting: 200)
                }
            } else {
                let person = fixture.dataHolders[index % fixture.dataHolders.count]
                await recorder.call("GET /v1/single-requests (person)") {
                    try await api.sendRaw(.GET, "/v1/single-requests?status=accepted", token: person.token, body: nil, expecting: 200)
                }
            }
        }
    }

    func download(as index: Int) async {
        let id = fixture.grantedRequestIDs[index % fixture.grantedRequestIDs.count]
        while ContinuousClock.now < deadline {
            await recorder.call("GET /v1/single-requests/{id}/data (CSV)") {
                try await api.sendRaw(.GET, "/v1/single-requests/\(id)/data?format=csv", token: fixture.companyToken, body: nil, expecting: 200)
            }
        }
    }

    func logIn(as index: Int) async {
        let person = fixture.dataHolders[index % fixture.dataHolders.count]
        while ContinuousClock.now < deadline {
            await recorder.call("POST /v1/sessions") {
                _ = try await api.logIn(email: person.email, password: person.password)
            }
        }
    }
}

enum LoadBodies {
    /// `count` heart-rate readings `step` seconds apart from `start`, as the JSON upload body.
    static func heartRates(count: Int, start: Date, step: Double) -> ByteBuffer {
        var text = "{\"samples\":["
        text.reserveCapacity(count * 64)
        for index in 0..<count {
            if index > 0 { text += "," }
            let at = Timestamp.rfc3339(start.addingTimeInterval(Double(index) * step))
            text += "{\"type\":\"heart_rate\",\"value\":\(60 + index % 60),\"at\":\"\(at)\"}"
        }
        text += "]}"
        return ByteBuffer(string: text)
    }
}

/// Latencies and errors per endpoint, shared by every client.
final class LoadRecorder: Sendable {
    private struct Endpoint {
        var milliseconds: [Double] = []
        var errors = 0
    }

    private struct State {
        var endpoints: [String: Endpoint] = [:]
        var errorExamples: [String] = []
    }

    private let state = Mutex(State())

    func call(_ endpoint: String, _ work: () async throws -> Void) async {
        let start = ContinuousClock.now
        var failure: (any Error)?
        do { try await work() } catch { failure = error }
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        state.withLock { state in
            state.endpoints[endpoint, default: Endpoint()].milliseconds.append(milliseconds)
            if let failure {
                state.endpoints[endpoint, default: Endpoint()].errors += 1
                if state.errorExamples.count < 10 { state.errorExamples.append("\(endpoint): \(failure)") }
            }
        }
    }

    func errorExamples() -> [String] { state.withLock { $0.errorExamples } }

    struct Report {
        var lines: [String]
        var requests: Int
        var errors: Int
    }

    func report(seconds: Double) -> Report {
        state.withLock { state in
            var lines: [String] = []
            var requests = 0
            var errors = 0
            for (name, endpoint) in state.endpoints.sorted(by: { $0.key < $1.key }) {
                let sorted = endpoint.milliseconds.sorted()
                func percentile(_ fraction: Double) -> String { String(format: "%.1f", d4h_dev.percentile(sorted, fraction)) }
                requests += sorted.count
                errors += endpoint.errors
                lines.append(
                    "| \(name) | \(sorted.count) | \(String(format: "%.1f", Double(sorted.count) / seconds)) | \(percentile(0.5)) | \(percentile(0.99)) | \(String(format: "%.1f", sorted.last ?? 0)) | \(endpoint.errors) |"
                )
            }
            lines.append("| **all** | \(requests) | \(String(format: "%.1f", Double(requests) / seconds)) | | | | \(errors) |")
            return Report(lines: lines, requests: requests, errors: errors)
        }
    }
}

/// The server's resident set size from /proc (Linux), sampled over the run.
final class ResidentMemorySampler: Sendable {
    let pid: Int32
    private let samples = Mutex<[Int]>([])

    init(pid: Int32) { self.pid = pid }

    /// KiB, or nil when not sampling or the process is gone.
    func sample() -> Int? {
        guard pid > 0, let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        samples.withLock { $0.append(kib) }
        return kib
    }

    func series() -> [Int] { samples.withLock { $0 } }

    func sampleEvery(_ interval: Duration, until deadline: ContinuousClock.Instant) async {
        while ContinuousClock.now + interval <= deadline {
            try? await Task.sleep(for: interval)
            _ = sample()
        }
    }
}

extension BenchAPI {
    /// Sends `body` as JSON and fails unless the status is `status`; the body is read to the end and dropped.
    @discardableResult
    func sendRaw(_ method: HTTPMethod, _ path: String, token: String?, body: ByteBuffer?, expecting status: UInt) async throws -> ByteBuffer {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(body)
        }
        let response = try await http.execute(request, timeout: .seconds(60))
        let received = try await response.body.collect(upTo: 256 << 20)
        guard response.status.code == status else {
            throw ValidationError("\(method) \(path) answered \(response.status.code): \(String(buffer: received).prefix(200))")
        }
        return received
    }

    func sendJSON(_ method: HTTPMethod, _ path: String, token: String?, json: [String: Any], expecting status: UInt) async throws
        -> [String: Any]
    {
        let body = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json))
        let received = try await sendRaw(method, path, token: token, body: body, expecting: status)
        return (try JSONSerialization.jsonObject(with: Data(buffer: received)) as? [String: Any]) ?? [:]
    }
}
