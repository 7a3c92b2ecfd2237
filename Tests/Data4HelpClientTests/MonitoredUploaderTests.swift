import AutomatedSOS
import Data4HelpClient
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// The server's upload endpoint as far as the outbox can tell: stores each `(type, at)` once, like the real
/// one, and can be told to fail or to lose its answer.
final class FakeSampleServer: ClientTransport {
    struct State {
        var stored: [String: Int] = [:]
        var requests = 0
        var failuresBeforeSuccess = 0
        /// Store the batch, then fail as if the connection dropped before the answer arrived.
        var loseNextAnswer = false
        var status503 = false
        /// Answer this many requests with 429 and `Retry-After: 30` (storing nothing) first.
        var rateLimitedBeforeSuccess = 0
    }

    let state = Mutex(State())

    /// How many times each `(type, at)` was stored as new (must never exceed 1).
    var stored: [String: Int] { state.withLock { $0.stored } }
    var requests: Int { state.withLock { $0.requests } }

    struct Dropped: Error {}

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        #expect(operationID == "uploadSamples")
        let data = try await Data(collecting: try #require(body), upTo: 10_000_000)
        let upload = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        let samples = upload["samples"] as! [[String: Any]]
        enum Next { case fail, rateLimited, drop, answer(accepted: Int, duplicates: Int) }
        let next: Next = state.withLock { state in
            state.requests += 1
            if state.rateLimitedBeforeSuccess > 0 {
                state.rateLimitedBeforeSuccess -= 1
                return .rateLimited
            }
            if state.failuresBeforeSuccess > 0 {
                state.failuresBeforeSuccess -= 1
                return .fail
            }
            var accepted = 0
            for sample in samples {
                let key = "\(sample["type"]!)@\(sample["at"]!)"
                if state.stored[key] == nil {
                    state.stored[key] = 1
                    accepted += 1
                }
            }
            if state.loseNextAnswer {
                state.loseNextAnswer = false
                return .drop
            }
            return .answer(accepted: accepted, duplicates: samples.count - accepted)
        }
        switch next {
        case .fail:
            return (HTTPResponse(status: .serviceUnavailable, headerFields: [.contentType: "application/problem+json"]),
                    HTTPBody(#"{"type":"about:blank","title":"Service Unavailable","status":503}"#))
        case .rateLimited:
            return (HTTPResponse(status: .tooManyRequests, headerFields: [.contentType: "application/problem+json", .retryAfter: "30"]),
                    HTTPBody(#"{"type":"https://data4help.example/problems/rate-limited","title":"Too many requests","status":429}"#))
        case .drop:
            throw Dropped()
        case .answer(let accepted, let duplicates):
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
                    HTTPBody(#"{"accepted":\#(accepted),"duplicates":\#(duplicates)}"#))
        }
    }
}

final class AlertLog: Sendable {
    let list = Mutex<[SOSAlert]>([])
    var rules: [String] { list.withLock { $0.map(\.rule) } }
}

final class Waits: Sendable {
    let recorded = Mutex<[Duration]>([])
    func sleep(_ duration: Duration) async throws { recorded.withLock { $0.append(duration) } }
}

@Suite struct MonitoredUploaderTests {
    let t0 = Date(timeIntervalSince1970: 1_795_000_000)

    func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func uploader(_ directory: URL, _ server: FakeSampleServer, waits: Waits = Waits(), monitor: SOSMonitor? = nil,
                  alerts: AlertLog? = nil, attempts: Int = 5) throws -> MonitoredUploader {
        var options = MonitoredUploader.Options()
        options.attempts = attempts
        options.batchSize = 3
        let client = Client(serverURL: URL(string: "http://device.test")!, configuration: .data4Help, transport: server)
        return try MonitoredUploader(
            monitor: monitor, onAlert: { alert in alerts?.list.withLock { $0.append(alert) } }, outboxDirectory: directory,
            client: client, options: options, sleep: waits.sleep)
    }

    func readings(_ count: Int, value: Double = 70) -> [SOSSample] {
        (0..<count).map { SOSSample(type: .heartRate, value: value, at: t0.addingTimeInterval(Double($0) * 60 + 0.125)) }
    }

    @Test func theAlertComesBeforeAnyUploadAndWithoutTheNetwork() async throws {
        let server = FakeSampleServer()
        let alerts = AlertLog()
        let device = try uploader(try directory(), server, monitor: SOSMonitor(age: 45), alerts: alerts)
        try await device.record(SOSSample(type: .heartRate, value: 30, at: t0))
        let raised = try await device.record(SOSSample(type: .heartRate, value: 31, at: t0.addingTimeInterval(60)))
        #expect(raised.map(\.rule) == ["heart_rate_low"])
        #expect(alerts.rules == ["heart_rate_low"])
        #expect(server.requests == 0)
        #expect(await device.pendingCount == 2)
    }

    @Test func samplesQueuedBeforeAKillAreUploadedByTheNextProcess() async throws {
        let dir = try directory()
        let server = FakeSampleServer()
        do {
            let first = try uploader(dir, server)
            for sample in readings(7) { try await first.record(sample) }
            // Killed here: nothing uploaded, the uploader is gone.
        }
        #expect(server.requests == 0)
        let second = try uploader(dir, server)
        #expect(await second.pendingCount == 7)
        #expect(try await second.flush() == 7)
        #expect(server.stored.count == 7)
        #expect(await second.pendingCount == 0)
        // And a third start has nothing left to send.
        let third = try uploader(dir, server)
        #expect(await third.pendingCount == 0)
        #expect(try await third.flush() == 0)
        #expect(server.requests == 3)  // 7 samples in batches of 3
    }

    @Test func aLostAnswerIsResentButNeverStoredTwice() async throws {
        let dir = try directory()
        let server = FakeSampleServer()
        server.state.withLock { $0.loseNextAnswer = true }
        let waits = Waits()
        let device = try uploader(dir, server, waits: waits)
        for sample in readings(3) { try await device.record(sample) }
        // The first attempt stores the batch but the answer is lost; the retry finds only duplicates.
        #expect(try await device.flush() == 0)
        #expect(server.requests == 2)
        #expect(server.stored.count == 3)
        #expect(server.stored.values.allSatisfy { $0 == 1 })
        #expect(await device.pendingCount == 0)
    }

    @Test func aKillBetweenUploadAndAcknowledgementResendsAsDuplicates() async throws {
        let dir = try directory()
        let server = FakeSampleServer()
        let first = try uploader(dir, server)
        for sample in readings(3) { try await first.record(sample) }
        // The disk as a crash after the upload but before the marker would leave it: samples, no marker.
        let crashed = try directory().appendingPathComponent("copy")
        try FileManager.default.copyItem(at: dir, to: crashed)
        #expect(try await first.flush() == 3)
        let second = try uploader(crashed, server)
        #expect(await second.pendingCount == 3)
        #expect(try await second.flush() == 0)
        #expect(server.stored.count == 3)
        #expect(server.stored.values.allSatisfy { $0 == 1 })
    }

    @Test func failuresAreRetriedWithExponentialBackoff() async throws {
        let server = FakeSampleServer()
        server.state.withLock { $0.failuresBeforeSuccess = 3 }
        let waits = Waits()
        let device = try uploader(try directory(), server, waits: waits)
        for sample in readings(2) { try await device.record(sample) }
        #expect(try await device.flush() == 2)
        #expect(waits.recorded.withLock { $0 } == [.seconds(1), .seconds(2), .seconds(4)])
    }

    @Test func aRateLimitedBatchWaitsForRetryAfterThenIsResent() async throws {
        let server = FakeSampleServer()
        server.state.withLock { $0.rateLimitedBeforeSuccess = 1 }
        let waits = Waits()
        let device = try uploader(try directory(), server, waits: waits)
        for sample in readings(2) { try await device.record(sample) }
        #expect(try await device.flush() == 2)
        // The server's 30 s, not the 1 s first backoff.
        #expect(waits.recorded.withLock { $0 } == [.seconds(30)])
        #expect(server.requests == 2)
        #expect(await device.pendingCount == 0)
    }

    @Test func givingUpKeepsTheBatchForLater() async throws {
        let dir = try directory()
        let server = FakeSampleServer()
        server.state.withLock { $0.failuresBeforeSuccess = 2 }
        let device = try uploader(dir, server, attempts: 2)
        for sample in readings(2) { try await device.record(sample) }
        await #expect(throws: MonitoredUploader.UploadError.gaveUp(attempts: 2)) { try await device.flush() }
        #expect(await device.pendingCount == 2)
        #expect(try await device.flush() == 2)
    }

    @Test func aTornLastLineIsDroppedAndTheRestKept() async throws {
        let dir = try directory()
        let server = FakeSampleServer()
        do {
            let first = try uploader(dir, server)
            for sample in readings(2) { try await first.record(sample) }
        }
        let log = try FileHandle(forWritingTo: dir.appendingPathComponent("samples.jsonl"))
        try log.seekToEnd()
        try log.write(contentsOf: Data(#"{"type":"heart_rate","val"#.utf8))
        try log.close()
        let second = try uploader(dir, server)
        #expect(await second.pendingCount == 2)
        try await second.record(readings(3)[2])
        let third = try uploader(dir, server)
        #expect(await third.pendingCount == 3)
        #expect(try await third.flush() == 3)
    }

    @Test func concurrentFlushesSendEachBatchOnce() async throws {
        let server = FakeSampleServer()
        let device = try uploader(try directory(), server)
        for sample in readings(7) { try await device.record(sample) }
        async let first = device.flush()
        async let second = device.flush()
        _ = try await (first, second)
        #expect(server.requests == 3)
        #expect(server.stored.count == 7)
        #expect(await device.pendingCount == 0)
    }

    @Test func anEmptiedOutboxStaysSmallAndKeepsWorking() async throws {
        let dir = try directory()
        let server = FakeSampleServer()
        let device = try uploader(dir, server)
        for sample in readings(4) { try await device.record(sample) }
        #expect(try await device.flush() == 4)
        let log = dir.appendingPathComponent("samples.jsonl")
        #expect(try Data(contentsOf: log).isEmpty)
        try await device.record(readings(5)[4])
        // A restart after the log was emptied finds exactly the one new sample.
        let restarted = try uploader(dir, server)
        #expect(await restarted.pendingCount == 1)
        #expect(try await restarted.flush() == 1)
        #expect(server.stored.count == 5)
    }
}
