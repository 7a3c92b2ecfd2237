import Foundation

/// Writes released samples as the download's JSON document or CSV, chunk by chunk, so a download of any
/// size needs only one chunk of memory. This is the hot loop of a download (a million samples take a
/// second), so it writes bytes directly: the type's name and unit are precomputed, a day's date is
/// formatted once per day, and numbers with few decimals are written without `Double.description`.
package struct ReleasedSampleEncoder {
    /// Data4Help's own forms (FHIR has its encoder: `FHIRObservationEncoder`).
    enum Form {
        case json, csv
    }

    let format: Form
    private var out = DownloadBytes(capacity: Self.chunkSize + 256)
    private var first = true
    /// `Self.names`, held by the encoder: a static is reached through its lazy initialiser on every row.
    private let names = Self.names
    /// What was written since the last chunk was taken.
    var bytes: [UInt8] { out.bytes }
    static let chunkSize = 64 * 1024

    init(format: Form) {
        self.format = format
        switch format {
        case .json: out.bytes += Array(#"{"items":["#.utf8)
        case .csv: out.bytes += Array("type,at,value,unit\r\n".utf8)
        }
    }

    var isChunkFull: Bool { out.bytes.count >= Self.chunkSize }

    /// Hands out what was written so far and starts a new chunk.
    mutating func takeChunk() -> [UInt8] {
        defer { out = DownloadBytes(capacity: Self.chunkSize + 256) }
        return out.bytes
    }

    mutating func append(type: SampleType, at: Date, value: Double) {
        _ = append(code: type.code, micros: DownloadBytes.micros(at), value: value)
    }

    /// Writes one sample given as the database holds it (its type's code, its time in microseconds since
    /// 1970); answers false, writing nothing, for a code this server does not know. The type's bytes are
    /// found by the code itself: `SampleType(code:)` searched every type for every sample.
    mutating func append(code: Int16, micros: Int64, value: Double) -> Bool {
        guard code >= 0, Int(code) < names.count, let names = names[Int(code)] else { return false }
        switch format {
        case .json:
            out.append(first ? names.jsonOpening : names.jsonOpeningAfterComma)
            out.appendTime(micros: micros)
            out.append(Self.jsonValue)
            out.appendNumber(value)
            out.append(names.jsonUnit)
        case .csv:
            out.append(names.csvType)
            out.appendTime(micros: micros)
            out.bytes.append(UInt8(ascii: ","))
            out.appendNumber(value)
            out.append(names.csvUnit)
        }
        first = false
        return true
    }

    /// Closes the JSON document; CSV needs nothing more.
    mutating func finish(availableTypes: [SampleType], nextCursor: String) {
        guard format == .json else { return }
        out.bytes += Array(#"],"availableTypes":["#.utf8)
        out.bytes += Array(availableTypes.map { "\"\($0.rawValue)\"" }.joined(separator: ",").utf8)
        out.bytes += Array(#"],"nextCursor":""#.utf8)
        out.bytes += Array(nextCursor.utf8)
        out.bytes += Array(#""}"#.utf8)
    }

    /// Shortest round-trip form; whole numbers without a fraction (`72`, `72.5`).
    package static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.description
    }

    // MARK: Precomputed bytes

    /// A type's pieces, made once for the process (see `DownloadBytes` for why not arrays).
    private struct TypeBytes {
        var jsonOpening: UnsafeBufferPointer<UInt8>
        var jsonOpeningAfterComma: UnsafeBufferPointer<UInt8>
        var jsonUnit: UnsafeBufferPointer<UInt8>
        var csvType: UnsafeBufferPointer<UInt8>
        var csvUnit: UnsafeBufferPointer<UInt8>
    }

    private static let jsonValue: StaticString = #"","value":"#

    /// Indexed by `SampleType.code` (nil for a code no type has). Made once and never changed, so safe to
    /// read from any task; the memory it points into lives as long as the process.
    nonisolated(unsafe) private static let names: [TypeBytes?] = {
        var table = [TypeBytes?](repeating: nil, count: Int(SampleType.allCases.map(\.code).max()!) + 1)
        for type in SampleType.allCases {
            table[Int(type.code)] = TypeBytes(
                jsonOpening: FixedBytes.permanent(#"{"type":"\#(type.rawValue)","at":""#),
                jsonOpeningAfterComma: FixedBytes.permanent(#",{"type":"\#(type.rawValue)","at":""#),
                jsonUnit: FixedBytes.permanent(#","unit":"\#(type.unit)"}"#),
                csvType: FixedBytes.permanent("\(type.rawValue),"),
                csvUnit: FixedBytes.permanent(",\(type.unit)\r\n"))
        }
        return table
    }()
}
