import Foundation

/// A recorded sequence of readings as CSV with the header `type,value,at` (the server's upload format),
/// kept in the order of the file, which is the order of delivery.
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
    public static func parse(_ text: String) throws -> [SOSSample] {
        var samples: [SOSSample] = []
        var sawHeader = false
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if !sawHeader {
                guard line.replacingOccurrences(of: " ", with: "") == "type,value,at" else {
                    throw ParseError(line: offset + 1, reason: "expected the header type,value,at")
                }
                sawHeader = true
                continue
            }
            samples.append(try parseLine(line, number: offset + 1))
        }
        guard sawHeader else { throw ParseError(line: 1, reason: "expected the header type,value,at") }
        return samples
    }

    static func parseLine(_ line: String, number: Int) throws -> SOSSample {
        let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard fields.count == 3 else { throw ParseError(line: number, reason: "expected 3 fields, found \(fields.count)") }
        guard let type = SOSSampleType(rawValue: fields[0]) else { throw ParseError(line: number, reason: "unknown type \(fields[0])") }
        guard let value = Double(fields[1]) else { throw ParseError(line: number, reason: "not a number: \(fields[1])") }
        guard let at = parseDate(fields[2]) else { throw ParseError(line: number, reason: "not an RFC 3339 time: \(fields[2])") }
        return SOSSample(type: type, value: value, at: at)
    }

    /// RFC 3339, with or without a fraction of a second.
    public static func parseDate(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true))
    }

    /// RFC 3339 in UTC, with milliseconds only when there are some.
    public static func format(_ date: Date) -> String {
        let whole = date.timeIntervalSinceReferenceDate.rounded(.down) == date.timeIntervalSinceReferenceDate
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: !whole, timeZone: TimeZone(identifier: "UTC")!)
        return style.format(date)
    }
}
