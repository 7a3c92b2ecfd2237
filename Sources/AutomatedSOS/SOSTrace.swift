import Foundation

/// A recorded sequence of readings as CSV with the header `type,value,at` (the server's upload format),
/// kept in the order of the file, which is the order of delivery. Besides the sample types, a line may be
/// a workout: `workout,<minutes>,<start>` (see `SOSWorkout`). `docs/automated-sos.md` describes the format.
///
/// `SOSTraceReader` reads a trace as it arrives, in constant memory; the functions here take a whole text.
public enum SOSTrace {
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public var line: Int
        public var reason: String
        public var description: String { "line \(line): \(reason)" }

        public init(line: Int, reason: String) {
            self.line = line
            self.reason = reason
        }
    }

    /// Parses a whole trace; every line must be valid, so a typo never silently shortens a replay.
    /// Workout lines are checked but left out: use `entries(_:)` to keep them.
    public static func parse(_ text: String) throws(ParseError) -> [SOSSample] {
        try entries(text).compactMap { entry in
            if case .sample(let sample) = entry { sample } else { nil }
        }
    }

    /// Parses a whole trace, samples and workouts in file order.
    public static func entries(_ text: String) throws(ParseError) -> [SOSTraceEntry] {
        var parser = SOSTraceLineParser()
        var entries: [SOSTraceEntry] = []
        for raw in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            if let entry = try Array(raw).withUnsafeBufferPointer({ bytes throws(ParseError) in try parser.parse(line: bytes) }) {
                entries.append(entry)
            }
        }
        try parser.finish()
        return entries
    }

    /// RFC 3339 (`2026-11-21T12:00:00Z`, `…:00.250Z`, `…:00+01:00`), strictly: no missing time zone (it
    /// would silently mean UTC) and no impossible dates (Foundation's ISO 8601 parser turns 30 February
    /// into 2 March).
    public static func parseDate(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { RFC3339.parse($0) }
    }

    /// RFC 3339 in UTC, with milliseconds only when there are some.
    public static func format(_ date: Date) -> String {
        let whole = date.timeIntervalSinceReferenceDate.rounded(.down) == date.timeIntervalSinceReferenceDate
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: !whole, timeZone: TimeZone(identifier: "UTC")!)
        return style.format(date)
    }
}
