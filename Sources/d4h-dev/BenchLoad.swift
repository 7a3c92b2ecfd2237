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
