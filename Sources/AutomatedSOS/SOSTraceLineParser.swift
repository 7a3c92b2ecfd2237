import Foundation

/// Parses a trace one line at a time, so a reader can hand over each line as it arrives and forget it.
/// It counts lines (1-based, every line including comments and blank ones) so an error names the line.
public struct SOSTraceLineParser: Sendable {
    /// The number of the line last given to `parse(line:)`.
    public private(set) var lineNumber = 0
    private var sawHeader = false

    /// The line form of a workout (`SOSWorkout`); not a sample type, see `SOSTraceEntry`.
    public static let workoutType = "workout"

    public init() {}

    /// The entry on `line` (without its newline), or nil for the header, a blank line or a `#` comment.
    public mutating func parse(line raw: UnsafeBufferPointer<UInt8>) throws(SOSTrace.ParseError) -> SOSTraceEntry? {
        lineNumber += 1
        let line = Self.trimmed(raw[...])
        if line.isEmpty || line.first == UInt8(ascii: "#") { return nil }
        if !sawHeader {
            guard line.filter({ $0 != UInt8(ascii: " ") }).elementsEqual("type,value,at".utf8) else {
                throw fail("expected the header type,value,at")
            }
            sawHeader = true
            return nil
        }
        // The fields between commas; no array, so a line allocates nothing beyond its small strings.
        var commas = 0
        var first = line.endIndex
        var second = line.endIndex
        for i in line.indices where line[i] == UInt8(ascii: ",") {
            commas += 1
            if commas == 1 { first = i } else if commas == 2 { second = i }
        }
        guard commas == 2 else { throw fail("expected 3 fields, found \(commas + 1)") }
        let typeField = Self.trimmed(line[line.startIndex..<first])
        let valueField = Self.trimmed(line[(first + 1)..<second])
        let timeField = Self.trimmed(line[(second + 1)..<line.endIndex])

        let typeName = String(decoding: typeField, as: UTF8.self)
        let type = SOSSampleType(rawValue: typeName)
        guard type != nil || typeName == Self.workoutType else { throw fail("unknown type \(typeName)") }
        let valueText = String(decoding: valueField, as: UTF8.self)
        guard let value = Double(valueText) else { throw fail("not a number: \(valueText)") }
        guard let at = RFC3339.parse(timeField) else {
            throw fail("not an RFC 3339 time: \(String(decoding: timeField, as: UTF8.self))")
        }
        guard let type else { return .workout(SOSWorkout(start: at, duration: value * 60)) }
        return .sample(SOSSample(type: type, value: value, at: at))
    }

    /// Checks what only the end of the trace can tell: that it had a header.
    public func finish() throws(SOSTrace.ParseError) {
        guard sawHeader else { throw SOSTrace.ParseError(line: max(1, lineNumber), reason: "expected the header type,value,at") }
    }

    private func fail(_ reason: String) -> SOSTrace.ParseError { SOSTrace.ParseError(line: lineNumber, reason: reason) }

    private static func trimmed(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Slice<UnsafeBufferPointer<UInt8>> {
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D }
        var low = bytes.startIndex
        var high = bytes.endIndex
        while low < high, isSpace(bytes[low]) { low += 1 }
        while high > low, isSpace(bytes[high - 1]) { high -= 1 }
        return bytes[low..<high]
    }
}
