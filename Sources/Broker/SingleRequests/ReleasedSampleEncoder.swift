import Foundation

/// Writes released samples as the download's JSON document or CSV, chunk by chunk, so a download of any
/// size needs only one chunk of memory.
public struct ReleasedSampleEncoder {
    public enum Format: Sendable { case json, csv }

    let format: Format
    private(set) var bytes: [UInt8] = []
    private var first = true
    static let chunkSize = 64 * 1024

    init(format: Format) {
        self.format = format
        bytes.reserveCapacity(Self.chunkSize + 256)
        switch format {
        case .json: append(#"{"items":["#)
        case .csv: append("type,at,value,unit\r\n")
        }
    }

    var isChunkFull: Bool { bytes.count >= Self.chunkSize }

    /// Hands out what was written so far and starts a new chunk.
    mutating func takeChunk() -> [UInt8] {
        defer {
            bytes = []
            bytes.reserveCapacity(Self.chunkSize + 256)
        }
        return bytes
    }

    mutating func append(type: SampleType, at: Date, value: Double) {
        switch format {
        case .json:
            append(first ? #"{"type":""# : #",{"type":""#)
            append(type.rawValue)
            append(#"","at":""#)
            Timestamp.appendRFC3339(at, to: &bytes)
            append(#"","value":"#)
            append(Self.number(value))
            append(#","unit":""#)
            append(type.unit)
            append(#""}"#)
        case .csv:
            append(type.rawValue)
            bytes.append(UInt8(ascii: ","))
            Timestamp.appendRFC3339(at, to: &bytes)
            bytes.append(UInt8(ascii: ","))
            append(Self.number(value))
            bytes.append(UInt8(ascii: ","))
            append(type.unit)
            append("\r\n")
        }
        first = false
    }

    /// Closes the JSON document; CSV needs nothing more.
    mutating func finish(availableTypes: [SampleType], nextCursor: String) {
        guard format == .json else { return }
        append(#"],"availableTypes":["#)
        append(availableTypes.map { "\"\($0.rawValue)\"" }.joined(separator: ","))
        append(#"],"nextCursor":""#)
        append(nextCursor)
        append(#""}"#)
    }

    /// Shortest round-trip form; whole numbers without a fraction (`72`, `72.5`).
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.description
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }
}
