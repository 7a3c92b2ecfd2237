import AutomatedSOS
import Foundation
import Synchronization
import Testing

/// `SOSTraceReader` and the streaming replay behind `d4h sos`: line by line, constant memory, a bad line
/// stopping the replay after everything before it.
@Suite struct TraceReaderTests {
    func file(_ text: String) throws -> FileHandle {
        let url = try temporaryDirectory().appendingPathComponent("trace.csv")
        try Data(text.utf8).write(to: url)
        return try FileHandle(forReadingFrom: url)
    }

    func readAll(_ reader: inout SOSTraceReader) throws -> [SOSTraceEntry] {
        var entries: [SOSTraceEntry] = []
        while let entry = try reader.next() { entries.append(entry) }
        return entries
    }

    @Test func readsSamplesWorkoutsCommentsAndALastLineWithoutNewline() throws {
        let text =
            "# a comment\n\ntype,value,at\r\nheart_rate,60,2026-11-21T12:00:00Z\r\n workout , 45 , 2026-11-21T12:01:00Z\nstep_count,10,2026-11-21T12:02:00.5Z"
        var reader = SOSTraceReader(handle: try file(text))
        let entries = try readAll(&reader)
        #expect(
            entries == [
                .sample(SOSSample(type: .heartRate, value: 60, at: SOSTrace.parseDate("2026-11-21T12:00:00Z")!)),
                .workout(SOSWorkout(start: SOSTrace.parseDate("2026-11-21T12:01:00Z")!, duration: 45 * 60)),
                .sample(SOSSample(type: .stepCount, value: 10, at: SOSTrace.parseDate("2026-11-21T12:02:00.5Z")!)),
            ])
        #expect(entries == (try SOSTrace.entries(text)))
    }

    @Test func aBadLineStopsTheReaderNamingItsNumberAfterTheLinesBeforeIt() throws {
        // A tiny buffer, so lines straddle reads.
        var reader = SOSTraceReader(
            handle: try file(
                "type,value,at\nheart_rate,60,2026-11-21T12:00:00Z\nheart_rate,61,2026-11-21T12:01:00Z\nheart_rate,sixty,2026-11-21T12:02:00Z\nheart_rate,62,2026-11-21T12:03:00Z\n"
            ), bufferSize: 48)
        #expect(try reader.next() != nil)
        #expect(try reader.next() != nil)
        #expect(throws: SOSTrace.ParseError(line: 4, reason: "not a number: sixty")) { try reader.next() }
        // Done after an error: the line after the bad one is never read.
        #expect(try reader.next() == nil)
    }

    @Test func eachKindOfBadLineIsNamed() throws {
        let cases: [(String, SOSTrace.ParseError)] = [
            ("a,b,c\n", .init(line: 1, reason: "expected the header type,value,at")),
            ("", .init(line: 1, reason: "expected the header type,value,at")),
            ("type,value,at\nheart,60,2026-11-21T12:00:00Z\n", .init(line: 2, reason: "unknown type heart")),
            ("type,value,at\nheart_rate,60\n", .init(line: 2, reason: "expected 3 fields, found 2")),
            ("type,value,at\n\nheart_rate,60,yesterday\n", .init(line: 3, reason: "not an RFC 3339 time: yesterday")),
            ("type,value,at\nworkout,long,2026-11-21T12:00:00Z\n", .init(line: 2, reason: "not a number: long")),
        ]
        for (text, error) in cases {
            var reader = SOSTraceReader(handle: try file(text))
            #expect(throws: error) { try readAll(&reader) }
        }
    }

    @Test func aLineLongerThanTheBufferIsAnErrorNotUnboundedMemory() throws {
        var reader = SOSTraceReader(
            handle: try file("type,value,at\nheart_rate,60,2026-11-21T12:00:00Z\n# " + String(repeating: "x", count: 200) + "\n"), bufferSize: 64)
        #expect(try reader.next() != nil)
        #expect(throws: SOSTraceReader.ReadError.lineTooLong(line: 3, limit: 64)) { try reader.next() }
    }

    /// A live feed: each line is yielded once written, while the writer still holds the pipe open.
    @Test func aPipeYieldsLinesBeforeItIsClosed() throws {
        let pipe = Pipe()
        var reader = SOSTraceReader(handle: pipe.fileHandleForReading)
        pipe.fileHandleForWriting.write(Data("type,value,at\nheart_rate,30,2026-11-21T12:00:00Z\n".utf8))
        #expect(try reader.next() == .sample(SOSSample(type: .heartRate, value: 30, at: SOSTrace.parseDate("2026-11-21T12:00:00Z")!)))
        pipe.fileHandleForWriting.write(Data("heart_rate,31,2026-11-21T12:01:00Z\n".utf8))
        #expect(try reader.next() == .sample(SOSSample(type: .heartRate, value: 31, at: SOSTrace.parseDate("2026-11-21T12:01:00Z")!)))
        try pipe.fileHandleForWriting.close()
        #expect(try reader.next() == nil)
    }

    @Test func theStreamingReplayEmitsEverythingBeforeABadLineThenThrows() async throws {
        // Alerts at 12:01 (heart_rate_low), then line 6 is bad; the pair after it would alert again but is never read.
        let text = """
            type,value,at
            heart_rate,30,2026-11-21T12:00:00Z
            heart_rate,30,2026-11-21T12:01:00Z
            systolic_pressure,150,2026-11-21T12:01:00Z
            systolic_pressure,150,2026-11-21T12:02:00Z
            diastolic_pressure,95,2026-11-21T12:02:00
            diastolic_pressure,95,2026-11-21T12:03:00Z
            diastolic_pressure,95,2026-11-21T12:04:00Z

            """
        let events = Mutex<[String]>([])
        await #expect(throws: SOSTrace.ParseError(line: 6, reason: "not an RFC 3339 time: 2026-11-21T12:02:00")) {
            try await SOSReplay(age: 45).run(streaming: SOSTraceEntries(handle: try file(text)), dialer: RecordingDialer()) { event in
                events.withLock { $0.append("\(event.event) \(event.rule)") }
            }
        }
        #expect(
            events.withLock { $0 } == [
                "alert heart_rate_low", "prompted heart_rate_low", "countdown_ended heart_rate_low", "dialed heart_rate_low",
                "alert hypertension_systolic", "prompted hypertension_systolic", "countdown_ended hypertension_systolic",
                "dialed hypertension_systolic",
            ])
    }

    @Test func theFastTimeParserAgreesWithFoundation() throws {
        let times = [
            "2026-11-21T12:00:00Z", "2026-11-21T12:00:00.250Z", "2026-11-21T12:00:00.123456789Z", "2024-02-29T23:59:59Z",
            "2026-11-21T14:00:00+02:00", "2026-11-21T06:30:00-05:30", "1970-01-01T00:00:00Z", "2000-03-01T00:00:00Z",
        ]
        for text in times {
            let foundation = try Date(
                text,
                strategy: .iso8601.year().month().day().time(includingFractionalSeconds: text.contains("."))
                    .timeZone(separator: .colon))
            let fast = try #require(SOSTrace.parseDate(text), "\(text)")
            #expect(abs(fast.timeIntervalSince(foundation)) < 0.001, "\(text)")
        }
        #expect(SOSTrace.parseDate("2026-11-21T12:00:00.250Z")?.timeIntervalSince1970 == 1_795_262_400.25)
        for bad in ["2026-02-30T12:00:00Z", "2026-11-21T24:00:00Z", "2026-11-21 12:00", "2026-11-21T12:00:00", "x"] {
            #expect(SOSTrace.parseDate(bad) == nil, "\(bad)")
        }
    }
}
