import AutomatedSOS
import Data4HelpClient
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// The server's upload endpoint as far as the outbox can tell: stores each `(type, at)` once, like the real
/// one, validates like it (all or nothing: a 422 naming `samples[i].value`, at most so many errors listed),
/// and can be told to fail or to lose its answer.
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
        /// Refuse (422, nothing stored) every upload holding a value above this, naming each such sample.
        var maximumValue: Double?
        /// How many field errors a 422 lists; the rest are summed up under `samples`, like the real server's 100.
        var maximumErrorsListed = 100
        /// Answer with a 422 holding exactly these fields, whatever the samples.
        var problemFields: [String]?
        /// Answer these requests (1-based) with a 503.
        var failRequests: Set<Int> = []
        /// Called with each request's number before it is handled (to copy the outbox mid-flush).
        var beforeRequest: (@Sendable (Int) -> Void)?
        /// Awaited with each request's number before it is handled (to call the uploader while a request is in flight).
        var whileInFlight: (@Sendable (Int) async -> Void)?
        /// The values of each request's samples, in order.
        var sentValues: [[Double]] = []
    }

    let state = Mutex(State())

    /// How many times each `(type, at)` was stored as new (must never exceed 1).
    var stored: [String: Int] { state.withLock { $0.stored } }
    var requests: Int { state.withLock { $0.requests } }
    var sentValues: [[Double]] { state.withLock { $0.sentValues } }

    struct Dropped: Error {}

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        #expect(operationID == "uploadSamples")
        let data = try await Data(collecting: try #require(body), upTo: 10_000_000)
        let upload = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        let samples = upload["samples"] as! [[String: Any]]
        enum Next {
            case fail, rateLimited, drop
            case answer(accepted: Int, duplicates: Int)
            case invalid([(String, String)])
        }
        let (number, hook, asyncHook) = state.withLock { state in
            state.requests += 1
            state.sentValues.append(samples.map { $0["value"] as! Double })
            return (state.requests, state.beforeRequest, state.whileInFlight)
        }
        hook?(number)
        await asyncHook?(number)
        let next: Next = state.withLock { state in
            if state.failRequests.contains(number) { return .fail }
            if state.rateLimitedBeforeSuccess > 0 {
                state.rateLimitedBeforeSuccess -= 1
                return .rateLimited
            }
            if state.failuresBeforeSuccess > 0 {
                state.failuresBeforeSuccess -= 1
                return .fail
            }
            // Validation is all or nothing: a 422 stores no sample of the upload.
            if let fields = state.problemFields { return .invalid(fields.map { ($0, "is invalid") }) }
            if let maximum = state.maximumValue {
                var errors = samples.enumerated().filter { ($0.element["value"] as! Double) > maximum }
                    .map { ("samples[\($0.offset)].value", "must be within 30–\(Int(maximum)) bpm for heart_rate") }
                if errors.count > state.maximumErrorsListed {
                    let more = errors.count - state.maximumErrorsListed
                    errors = Array(errors.prefix(state.maximumErrorsListed)) + [("samples", "and \(more) more invalid samples")]
                }
                if !errors.isEmpty { return .invalid(errors) }
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
            return (
                HTTPResponse(status: .serviceUnavailable, headerFields: [.contentType: "application/problem+json"]),
                HTTPBody(#"{"type":"about:blank","title":"Service Unavailable","status":503}"#)
            )
        case .rateLimited:
            return (
                HTTPResponse(status: .tooManyRequests, headerFields: [.contentType: "application/problem+json", .retryAfter: "30"]),
                HTTPBody(#"{"type":"https://data4help.example/problems/rate-limited","title":"Too many requests","status":429}"#)
            )
        case .drop:
            throw Dropped()
        case .invalid(let errors):
            let problem: [String: Any] = [
                "type": "https://data4help.example/problems/validation-failed", "title": "The request is invalid",
                "status": 422, "detail": "One or more fields are invalid.",
                "errors": errors.map { ["field": $0.0, "message": $0.1] },
            ]
            return (
                HTTPResponse(status: .init(code: 422), headerFields: [.contentType: "application/problem+json"]),
                HTTPBody(try JSONSerialization.data(withJSONObject: problem))
            )
        case .answer(let accepted, let duplicates):
            return (
                HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
                HTTPBody(#"{"accepted":\#(accepted),"duplicates":\#(duplicates)}"#)
            )
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

    func uploader(
        _ directory: URL, _ server: FakeSampleServer, waits: Waits = Waits(), monitor: SOSMonitor? = nil,
        alerts: AlertLog? = nil, attempts: Int = 5
    ) throws -> MonitoredUploader {
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
        #expect(try await second.flush().stored == 7)
        #expect(server.stored.count == 7)
        #expect(await second.pendingCount == 0)
        // And a third start has nothing left to send.
        let third = try uploader(dir, server)
        #expect(await third.pendingCount == 0)
        #expect(try await third.flush().stored == 0)
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
        #expect(try await device.flush().stored == 0)
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
        #expect(try await first.flush().stored == 3)
        let second = try uploader(crashed, server)
        #expect(await second.pendingCount == 3)
        #expect(try await second.flush().stored == 0)
        #expect(server.stored.count == 3)
        #expect(server.stored.values.allSatisfy { $0 == 1 })
    }

    @Test func failuresAreRetriedWithExponentialBackoff() async throws {
        let server = FakeSampleServer()
        server.state.withLock { $0.failuresBeforeSuccess = 3 }
        let waits = Waits()
        let device = try uploader(try directory(), server, waits: waits)
        for sample in readings(2) { try await device.record(sample) }
        #expect(try await device.flush().stored == 2)
        #expect(waits.recorded.withLock { $0 } == [.seconds(1), .seconds(2), .seconds(4)])
    }

    @Test func aRateLimitedBatchWaitsForRetryAfterThenIsResent() async throws {
        let server = FakeSampleServer()
        server.state.withLock { $0.rateLimitedBeforeSuccess = 1 }
        let waits = Waits()
        let device = try uploader(try directory(), server, waits: waits)
        for sample in readings(2) { try await device.record(sample) }
        #expect(try await device.flush().stored == 2)
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
        #expect(try await device.flush().stored == 2)
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
        #expect(try await third.flush().stored == 3)
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
        #expect(try await device.flush().stored == 4)
        let log = dir.appendingPathComponent("samples.jsonl")
        #expect(try Data(contentsOf: log).isEmpty)
        try await device.record(readings(5)[4])
        // A restart after the log was emptied finds exactly the one new sample.
        let restarted = try uploader(dir, server)
        #expect(await restarted.pendingCount == 1)
        #expect(try await restarted.flush().stored == 1)
        #expect(server.stored.count == 5)
    }

    // MARK: Samples the server refuses (422)

    /// Heart-rate readings a minute apart with these values (the fake server refuses above 250).
    func series(_ values: [Double]) -> [SOSSample] {
        values.enumerated().map { SOSSample(type: .heartRate, value: $0.element, at: t0.addingTimeInterval(Double($0.offset) * 60 + 0.125)) }
    }

    func quarantineLines(_ directory: URL) throws -> [String] {
        let text = try String(contentsOf: directory.appendingPathComponent("rejected.jsonl"), encoding: .utf8)
        return text.split(separator: "\n").map(String.init)
    }

    let outOfRange = "value must be within 30–250 bpm for heart_rate"

    @Test func aRefusedSampleIsQuarantinedAndTheRestOfItsBatchUploadedOnce() async throws {
        let dir = try directory()
        let server = FakeSampleServer()
        server.state.withLock { $0.maximumValue = 250 }
        let device = try uploader(dir, server)
        let samples = series([70, 400, 72, 73, 74, 75, 76])
        for sample in samples { try await device.record(sample) }
        #expect(try await device.flush() == .init(stored: 6, rejected: 1))
        // The first batch is refused whole (nothing stored), then re-sent without its middle sample; the
        // later batches are not held up.
        #expect(server.sentValues == [[70, 400, 72], [70, 72], [73, 74, 75], [76]])
        #expect(server.stored.count == 6)
        #expect(server.stored.values.allSatisfy { $0 == 1 })
        #expect(await device.pendingCount == 0)
        let rejected = await device.rejectedSamples
        #expect(rejected.map(\.sample) == [samples[1]])
        #expect(rejected.map(\.messages) == [[outOfRange]])
        #expect(try quarantineLines(dir).count == 1)
        // Nothing is left to send; the refused sample is not sent again.
        #expect(try await device.flush() == .init())
        #expect(server.requests == 4)
    }

    @Test func refusalsBeyondTheListedOnesAreQuarantinedInLaterRounds() async throws {
        let server = FakeSampleServer()
        server.state.withLock {
            $0.maximumValue = 250
            $0.maximumErrorsListed = 1  // the rest summed up under `samples`, which names no index
        }
        let device = try uploader(try directory(), server)
        for sample in series([400, 70, 500]) { try await device.record(sample) }
        #expect(try await device.flush() == .init(stored: 1, rejected: 2))
        // The second 422's `samples[1]` is an index into the re-sent batch, i.e. the 500.
        #expect(server.sentValues == [[400, 70, 500], [70, 500], [70]])
        #expect(await device.rejectedSamples.map(\.sample.value) == [400, 500])
        #expect(await device.pendingCount == 0)
    }

    @Test func theQuarantineSurvivesARestartUntilDiscarded() async throws {
        let dir = try directory()
        let server = FakeSampleServer()
        server.state.withLock { $0.maximumValue = 250 }
        do {
            let first = try uploader(dir, server)
            for sample in series([70, 300]) { try await first.record(sample) }
            #expect(try await first.flush() == .init(stored: 1, rejected: 1))
        }
        // A crash mid-append of a later quarantine line leaves a torn line: dropped on open, the rest kept.
        let file = try FileHandle(forWritingTo: dir.appendingPathComponent("rejected.jsonl"))
        try file.seekToEnd()
        try file.write(contentsOf: Data(#"{"type":"heart_rate","val"#.utf8))
        try file.close()
        let second = try uploader(dir, server)
        let kept = await second.rejectedSamples
        #expect(kept.count == 1)
        #expect(kept.first?.sample.type == .heartRate)
        #expect(kept.first?.sample.value == 300)
        let first = try #require(kept.first)
        #expect(abs(first.sample.at.timeIntervalSince(t0.addingTimeInterval(60.125))) < 1e-6)
        #expect(kept.first?.messages == [outOfRange])
        #expect(await second.pendingCount == 0)
        #expect(try await second.flush() == .init())

        try await second.discardRejected()
        #expect(await second.rejectedSamples.isEmpty)
        #expect(try quarantineLines(dir).isEmpty)
        let third = try uploader(dir, server)
        #expect(await third.rejectedSamples.isEmpty)
        // And the emptied quarantine takes new refusals.
        try await third.record(SOSSample(type: .heartRate, value: 260, at: t0.addingTimeInterval(600)))
        #expect(try await third.flush() == .init(stored: 0, rejected: 1))
        #expect(try quarantineLines(dir).count == 1)
        let fourth = try uploader(dir, server)
        #expect(await fourth.rejectedSamples.map(\.sample.value) == [260])
    }

    @Test func aRefusalThatNamesNoSampleOfTheBatchThrowsAndKeepsTheBatch() async throws {
        let dir = try directory()
        let server = FakeSampleServer()
        let device = try uploader(dir, server)
        for sample in series([70, 71]) { try await device.record(sample) }
        // No errors at all, one about the whole upload, one naming an index the batch does not have.
        let answers: [[String]] = [[], ["samples"], ["samples[5].value"], ["samples[1].value", "samples[2].at"]]
        for fields in answers {
            server.state.withLock { $0.problemFields = fields }
            await #expect(throws: MonitoredUploader.UploadError.rejected(status: 422)) { try await device.flush() }
            #expect(await device.pendingCount == 2)
            #expect(await device.rejectedSamples.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("rejected.jsonl").path))
        server.state.withLock { $0.problemFields = nil }
        #expect(try await device.flush() == .init(stored: 2, rejected: 0))
    }

    /// The state a crash right after quarantining leaves: the refused sample in `rejected.jsonl`, the whole
    /// batch still pending. Here the process gives up instead (the re-send fails), which leaves the same disk.
    @Test func aCrashAfterQuarantiningBeforeTheRestIsSentLosesNothing() async throws {
        let dir = try directory()
        let server = FakeSampleServer()
        server.state.withLock {
            $0.maximumValue = 250
            $0.failRequests = [2]
        }
        let device = try uploader(dir, server, attempts: 1)
        for sample in series([70, 400, 72]) { try await device.record(sample) }
        await #expect(throws: MonitoredUploader.UploadError.gaveUp(attempts: 1)) { try await device.flush() }
        #expect(await device.pendingCount == 3)
        #expect(await device.rejectedSamples.map(\.sample.value) == [400])
        #expect(server.stored.isEmpty)
        // Copy the disk as the crash left it, for a second "device" talking to a server that stored nothing.
        let crashed = try directory().appendingPathComponent("crashed")
        try FileManager.default.copyItem(at: dir, to: crashed)

        // The same process, later: the quarantined sample is skipped, the others go as new.
        #expect(try await device.flush() == .init(stored: 2, rejected: 0))
        #expect(server.sentValues.last == [70, 72])

        // A restart on the crashed disk: the same, and the quarantine holds the sample once.
        let other = FakeSampleServer()
        other.state.withLock { $0.maximumValue = 250 }
        let restarted = try uploader(crashed, other)
        #expect(await restarted.pendingCount == 3)
        #expect(try await restarted.flush() == .init(stored: 2, rejected: 0))
        #expect(other.sentValues == [[70, 72]])
        #expect(other.stored.count == 2)
        #expect(await restarted.pendingCount == 0)
        #expect(await restarted.rejectedSamples.map(\.sample.value) == [400])
        #expect(try quarantineLines(crashed).count == 1)
    }

    @Test func aCrashAfterTheRestIsStoredButBeforeTheAcknowledgementResendsOnlyDuplicates() async throws {
        let dir = try directory()
        let crashed = try directory().appendingPathComponent("crashed")
        let server = FakeSampleServer()
        server.state.withLock {
            $0.maximumValue = 250
            // The re-send of the rest arrives: the quarantine is on the disk, the acknowledgement is not.
            $0.beforeRequest = { number in
                if number == 2 { try! FileManager.default.copyItem(at: dir, to: crashed) }
            }
        }
        let device = try uploader(dir, server)
        for sample in series([70, 400, 72]) { try await device.record(sample) }
        #expect(try await device.flush() == .init(stored: 2, rejected: 1))
        #expect(server.stored.count == 2)

        let restarted = try uploader(crashed, server)
        #expect(await restarted.pendingCount == 3)
        #expect(await restarted.rejectedSamples.map(\.sample.value) == [400])
        // The rest is re-sent and found to be duplicates; the refused sample is neither re-sent nor re-quarantined.
        #expect(try await restarted.flush() == .init(stored: 0, rejected: 0))
        #expect(server.sentValues == [[70, 400, 72], [70, 72], [70, 72]])
        #expect(server.stored.count == 2)
        #expect(server.stored.values.allSatisfy { $0 == 1 })
        #expect(await restarted.pendingCount == 0)
        #expect(try quarantineLines(crashed).count == 1)
    }

    // MARK: Requeueing refused samples

    @Test func requeueingSendsARefusedSampleAgainOnceTheServerTakesIt() async throws {
        let dir = try directory()
        let server = FakeSampleServer()
        server.state.withLock { $0.maximumValue = 250 }
        let device = try uploader(dir, server)
        for sample in series([70, 400, 72]) { try await device.record(sample) }
        #expect(try await device.flush() == .init(stored: 2, rejected: 1))

        // Still refused: requeued, re-sent, and back in the quarantine once (the emptied file takes it cleanly).
        #expect(try await device.requeueRejected() == 1)
        #expect(await device.rejectedSamples.isEmpty)
        #expect(try quarantineLines(dir).isEmpty)
        #expect(await device.pendingCount == 1)
        #expect(try await device.flush() == .init(stored: 0, rejected: 1))
        #expect(server.sentValues.last == [400])
        #expect(try quarantineLines(dir).count == 1)
        #expect(try quarantineLines(dir).first?.hasPrefix("{") == true)  // written from the start, no hole

        // The cause is gone: the next flush sends it and the quarantine is left empty.
        server.state.withLock { $0.maximumValue = nil }
        #expect(try await device.requeueRejected() == 1)
        #expect(try await device.flush() == .init(stored: 1, rejected: 0))
        #expect(server.sentValues == [[70, 400, 72], [70, 72], [400], [400]])
        #expect(server.stored.count == 3)
        #expect(server.stored.values.allSatisfy { $0 == 1 })
        #expect(await device.pendingCount == 0)
        #expect(await device.rejectedSamples.isEmpty)
        #expect(try quarantineLines(dir).isEmpty)
        // Nothing left to requeue or send.
        #expect(try await device.requeueRejected() == 0)
        #expect(try await device.flush() == .init())
        #expect(server.requests == 4)
    }

    @Test func aRequeueSurvivesARestart() async throws {
        let dir = try directory()
        let server = FakeSampleServer()
        server.state.withLock { $0.maximumValue = 250 }
        do {
            let first = try uploader(dir, server)
            for sample in series([70, 300, 400]) { try await first.record(sample) }
            #expect(try await first.flush() == .init(stored: 1, rejected: 2))
            #expect(try await first.requeueRejected() == 2)
            // Killed here, before any flush.
        }
        let second = try uploader(dir, server)
        #expect(await second.pendingCount == 2)
        #expect(await second.rejectedSamples.isEmpty)
        server.state.withLock { $0.maximumValue = nil }
        #expect(try await second.flush() == .init(stored: 2, rejected: 0))
        #expect(server.sentValues.last == [300, 400])
        #expect(server.stored.count == 3)
        let third = try uploader(dir, server)
        #expect(await third.pendingCount == 0)
        #expect(await third.rejectedSamples.isEmpty)
    }

    /// The disk a crash inside `requeueRejected` leaves, after the append to the log and before the quarantine
    /// is emptied: the refused sample both pending and quarantined.
    @Test func aCrashInsideARequeueLosesNothingAndTheNextRequeueSendsTheSampleOnce() async throws {
        let dir = try directory()
        let server = FakeSampleServer()
        server.state.withLock { $0.maximumValue = 250 }
        do {
            let first = try uploader(dir, server)
            for sample in series([70, 400]) { try await first.record(sample) }
            #expect(try await first.flush() == .init(stored: 1, rejected: 1))
            #expect(await first.pendingCount == 0)
        }
        do {
            let outbox = try SampleOutbox(directory: dir)
            try outbox.append(outbox.rejected.map(\.sample))
        }
        // Two devices from that disk: one requeues right away, the other flushes first (which acknowledges the
        // pending copy unsent, since it is quarantined) and requeues after.
        let crashed = try directory().appendingPathComponent("crashed")
        try FileManager.default.copyItem(at: dir, to: crashed)
        server.state.withLock { $0.maximumValue = nil }

        let restarted = try uploader(dir, server)
        #expect(await restarted.pendingCount == 1)
        #expect(await restarted.rejectedSamples.map(\.sample.value) == [400])
        #expect(try await restarted.requeueRejected() == 1)
        #expect(await restarted.pendingCount == 1)  // not a second copy
        #expect(await restarted.rejectedSamples.isEmpty)
        #expect(try await restarted.flush() == .init(stored: 1, rejected: 0))
        #expect(server.sentValues == [[70, 400], [70], [400]])
        #expect(await restarted.rejectedSamples.isEmpty)
        #expect(try quarantineLines(dir).isEmpty)
        #expect(try await uploader(dir, server).pendingCount == 0)

        let other = FakeSampleServer()
        let flushedFirst = try uploader(crashed, other)
        #expect(try await flushedFirst.flush() == .init())
        #expect(other.requests == 0)
        #expect(await flushedFirst.pendingCount == 0)
        #expect(await flushedFirst.rejectedSamples.map(\.sample.value) == [400])
        #expect(try await flushedFirst.requeueRejected() == 1)
        #expect(await flushedFirst.pendingCount == 1)
        #expect(try await flushedFirst.flush() == .init(stored: 1, rejected: 0))
        #expect(other.sentValues == [[400]])
        #expect(await flushedFirst.rejectedSamples.isEmpty)
        #expect(try quarantineLines(crashed).isEmpty)
    }

    /// A requeue while the rest of the batch is in flight takes the refused sample out of the quarantine
    /// without appending it (it is still pending in that batch): the batch must send it before it is
    /// acknowledged, not drop it.
    @Test func aRequeueWhileTheBatchIsInFlightSendsTheSampleInThatBatch() async throws {
        let server = FakeSampleServer()
        server.state.withLock { $0.maximumValue = 250 }
        let device = try uploader(try directory(), server)
        server.state.withLock {
            $0.whileInFlight = { number in
                guard number == 2 else { return }
                server.state.withLock { $0.maximumValue = nil }
                let requeued = try? await device.requeueRejected()
                #expect(requeued == 1)
            }
        }
        for sample in series([70, 400, 72]) { try await device.record(sample) }
        #expect(try await device.flush() == .init(stored: 3, rejected: 1))
        #expect(server.sentValues == [[70, 400, 72], [70, 72], [400]])
        #expect(server.stored.count == 3)
        #expect(await device.pendingCount == 0)
        #expect(await device.rejectedSamples.isEmpty)
    }
}
