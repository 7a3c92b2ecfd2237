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
    private(set) var bytes: [UInt8] = []
    private var first = true
    private var cachedDay = Int.min
    private var cachedDayBytes: [UInt8] = []
    static let chunkSize = 64 * 1024

    init(format: Form) {
        self.format = format
        bytes.reserveCapacity(Self.chunkSize + 256)
        switch format {
        case .json: bytes += Array(#"{"items":["#.utf8)
        case .csv: bytes += Array("type,at,value,unit\r\n".utf8)
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
        let names = Self.names[Int(type.code)]
        switch format {
        case .json:
            bytes += first ? names.jsonOpening : names.jsonOpeningAfterComma
            appendTime(at)
            bytes += Self.jsonValue
            appendNumber(value)
            bytes += names.jsonUnit
        case .csv:
            bytes += names.csvType
            appendTime(at)
            bytes.append(UInt8(ascii: ","))
            appendNumber(value)
            bytes += names.csvUnit
        }
        first = false
    }

    /// Closes the JSON document; CSV needs nothing more.
    mutating func finish(availableTypes: [SampleType], nextCursor: String) {
        guard format == .json else { return }
        bytes += Array(#"],"availableTypes":["#.utf8)
        bytes += Array(availableTypes.map { "\"\($0.rawValue)\"" }.joined(separator: ",").utf8)
        bytes += Array(#"],"nextCursor":""#.utf8)
        bytes += Array(nextCursor.utf8)
        bytes += Array(#""}"#.utf8)
    }

    // MARK: Times

    /// `Timestamp.rfc3339(date)`, with the date part cached per day.
    private mutating func appendTime(_ date: Date) {
        let (seconds, micros) = Timestamp.split(date)
        let day = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        if day != cachedDay {
            cachedDay = day
            cachedDayBytes = Array((CalendarDate(dayNumber: day)?.description ?? "0000-00-00").utf8) + [UInt8(ascii: "T")]
        }
        bytes += cachedDayBytes
        let rest = seconds - day * 86_400
        appendTwoDigits(rest / 3600)
        bytes.append(UInt8(ascii: ":"))
        appendTwoDigits(rest % 3600 / 60)
        bytes.append(UInt8(ascii: ":"))
        appendTwoDigits(rest % 60)
        if micros != 0 {
            var fraction = micros
            var width = 6
            while fraction % 10 == 0 {
                fraction /= 10
                width -= 1
            }
            bytes.append(UInt8(ascii: "."))
            appendDigits(fraction, width: width)
        }
        bytes.append(UInt8(ascii: "Z"))
    }

    private mutating func appendTwoDigits(_ value: Int) {
        bytes.append(UInt8(truncatingIfNeeded: 48 + value / 10))
        bytes.append(UInt8(truncatingIfNeeded: 48 + value % 10))
    }

    private mutating func appendDigits(_ value: Int, width: Int) {
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(truncatingIfNeeded: 48 + rest % 10)
                rest /= 10
                count += 1
            } while rest > 0 || count < width
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
    }

    // MARK: Numbers

    /// Shortest round-trip form, as `Self.number` gives it, written without building a String for the
    /// common case of up to three decimals.
    private mutating func appendNumber(_ value: Double) {
        guard value >= 0, value < 1e12 else {
            bytes += Array(Self.number(value).utf8)
            return
        }
        var scale = 1.0
        for decimals in 0...3 {
            let scaled = (value * scale).rounded()
            // The decimal text of `scaled / scale` parses back to the nearest double of that decimal, which
            // is exactly `scaled / scale`: so equality means the text round-trips, and the first such
            // number of decimals is the shortest.
            if scaled / scale == value {
                let whole = Int(scaled) / Int(scale)
                let fraction = Int(scaled) % Int(scale)
                appendDigits(whole, width: 1)
                if decimals > 0 {
                    bytes.append(UInt8(ascii: "."))
                    appendDigits(fraction, width: decimals)
                }
                return
            }
            scale *= 10
        }
        bytes += Array(Self.number(value).utf8)
    }

    /// Shortest round-trip form; whole numbers without a fraction (`72`, `72.5`).
    package static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.description
    }

    // MARK: Precomputed bytes

    private struct TypeBytes {
        var jsonOpening: [UInt8]
        var jsonOpeningAfterComma: [UInt8]
        var jsonUnit: [UInt8]
        var csvType: [UInt8]
        var csvUnit: [UInt8]
    }

    private static let jsonValue = Array(#"","value":"#.utf8)

    /// Indexed by `SampleType.code`.
    private static let names: [TypeBytes] = {
        var table = Array(
            repeating: TypeBytes(jsonOpening: [], jsonOpeningAfterComma: [], jsonUnit: [], csvType: [], csvUnit: []),
            count: Int(SampleType.allCases.map(\.code).max()!) + 1)
        for type in SampleType.allCases {
            table[Int(type.code)] = TypeBytes(
                jsonOpening: Array(#"{"type":"\#(type.rawValue)","at":""#.utf8),
                jsonOpeningAfterComma: Array(#",{"type":"\#(type.rawValue)","at":""#.utf8),
                jsonUnit: Array(#","unit":"\#(type.unit)"}"#.utf8),
                csvType: Array("\(type.rawValue),".utf8),
                csvUnit: Array(",\(type.unit)\r\n".utf8))
        }
        return table
    }()
}
