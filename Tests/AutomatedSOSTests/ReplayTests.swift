import AutomatedSOS
import Foundation
import Synchronization
import Testing

/// Every recorded trace in Tests/Fixtures/sos, through `SOSReplay` (the code behind `d4h sos`).
@Suite struct ReplayTests {
    struct Fixture: Sendable, CustomTestStringConvertible {
        var file: String
        var age: Int
        /// (rule, at) of every expected alert, in order.
        var expected: [(String, String)]
        var testDescription: String { file }
    }

    static let fixtures: [Fixture] = [
        Fixture(file: "resting-night.csv", age: 45, expected: []),
        Fixture(file: "workout-high-heart-rate.csv", age: 45, expected: []),
        Fixture(
            file: "fainting.csv", age: 45,
            expected: [
                ("heart_rate_low", "2026-11-21T09:03:00Z"),
                ("hypotension_systolic", "2026-11-21T09:03:30Z"),
                ("hypotension_diastolic", "2026-11-21T09:03:30Z"),
            ]),
        Fixture(
            file: "hypertensive-crisis.csv", age: 60,
            expected: [
                ("hypertension_systolic", "2026-11-21T14:06:00Z"),
                ("hypertension_diastolic", "2026-11-21T14:06:00Z"),
                ("hypertension_systolic", "2026-11-21T14:25:00Z"),
                ("hypertension_diastolic", "2026-11-21T14:25:00Z"),
            ]),
        Fixture(file: "sensor-glitch.csv", age: 45, expected: []),
        Fixture(file: "out-of-order.csv", age: 45, expected: [("heart_rate_low", "2026-11-21T12:03:00Z")]),
        Fixture(file: "cycling-high-heart-rate.csv", age: 45, expected: []),
        Fixture(file: "swimming-workout.csv", age: 45, expected: []),
        Fixture(file: "resting-high-heart-rate.csv", age: 45, expected: [("heart_rate_high", "2026-11-21T18:16:30Z")]),
    ]

    static func fixtureURL(_ file: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/sos/\(file)")
    }

    static func trace(_ file: String) throws -> [SOSTraceEntry] {
        try SOSTrace.entries(String(contentsOf: fixtureURL(file), encoding: .utf8))
    }

    @Test(arguments: fixtures)
    func replayRaisesExactlyTheExpectedAlerts(_ fixture: Fixture) async throws {
        let events = Mutex<[SOSReplayEvent]>([])
        let dialer = RecordingDialer()
        let alerts = await SOSReplay(age: fixture.age).run(try Self.trace(fixture.file), dialer: dialer) { event in
            events.withLock { $0.append(event) }
        }
        #expect(alerts.map { $0.rule } == fixture.expected.map(\.0))
        #expect(alerts.map { SOSTrace.format($0.at) } == fixture.expected.map(\.1))
        // Nobody answers a replay: every alert is prompted, runs out its countdown and calls.
        #expect(dialer.placed == alerts)
        let names = events.withLock { $0.map(\.event) }
        #expect(names == Array(repeating: ["alert", "prompted", "countdown_ended", "dialed"], count: alerts.count).flatMap { $0 })
    }

    /// The streaming path (`d4h sos`) raises what the in-memory one does, fixture by fixture.
    @Test(arguments: fixtures)
    func streamingRaisesTheSameAlerts(_ fixture: Fixture) async throws {
        let handle = try FileHandle(forReadingFrom: Self.fixtureURL(fixture.file))
        defer { try? handle.close() }
        let alerts = Mutex<[SOSReplayEvent]>([])
        let count = try await SOSReplay(age: fixture.age).run(streaming: SOSTraceEntries(handle: handle), dialer: RecordingDialer()) { event in
            if event.event == "alert" { alerts.withLock { $0.append(event) } }
        }
        #expect(count == fixture.expected.count)
        #expect(alerts.withLock { $0.map(\.rule) } == fixture.expected.map(\.0))
        #expect(alerts.withLock { $0.map { SOSTrace.format($0.at) } } == fixture.expected.map(\.1))
    }

    @Test func eventLinesAreJSONWithTheCountdownOnTraceTime() async throws {
        let lines = Mutex<[String]>([])
        await SOSReplay(age: 45, responder: SOSResponderConfiguration(countdown: 30, callOnSilence: false))
            .run(try Self.trace("out-of-order.csv"), dialer: RecordingDialer()) { event in lines.withLock { $0.append(event.jsonLine()) } }
        #expect(
            lines.withLock { $0 } == [
                #"{"at":"2026-11-21T12:03:00Z","comparison":"below","event":"alert","rule":"heart_rate_low","threshold":40,"type":"heart_rate","value":32}"#,
                #"{"at":"2026-11-21T12:05:00Z","deadline":"2026-11-21T12:05:30Z","event":"prompted","rule":"heart_rate_low"}"#,
                #"{"at":"2026-11-21T12:05:30Z","event":"countdown_ended","rule":"heart_rate_low"}"#,
            ])
    }

    @Test func aBadTraceLineIsReportedWithItsNumber() {
        #expect(throws: SOSTrace.ParseError(line: 3, reason: "unknown type heart")) {
            try SOSTrace.parse("type,value,at\nheart_rate,60,2026-11-21T12:00:00Z\nheart,60,2026-11-21T12:00:00Z\n")
        }
        #expect(throws: SOSTrace.ParseError(line: 1, reason: "expected the header type,value,at")) { try SOSTrace.parse("a,b,c\n") }
    }

    @Test func fractionalSecondsParse() throws {
        let samples = try SOSTrace.parse("type,value,at\nheart_rate,60,2026-11-21T12:00:00.250Z\n")
        #expect(samples.first?.at.timeIntervalSince1970 == 1_795_262_400.25)
    }
}
