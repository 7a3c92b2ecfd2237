import Foundation

/// The bytes of one download chunk, and the writers the download encoders share for what every row holds:
/// a time (RFC 3339, the date part formatted once per day) and a number (the shortest form that reads back,
/// without building a String for up to three decimals). A download of a million samples is a million of
/// each, so these are written by hand rather than through `Timestamp.rfc3339` and `Double.description`.
///
/// Nothing written per row is reference counted: the fixed pieces come as `StaticString`s or as memory their
/// encoder owns (`FixedBytes`), and the cached date lives in the struct itself. Appending an `[UInt8]` retains
/// and releases it, and at ten pieces a row that was a fifth of a FHIR download's CPU.
struct DownloadBytes {
    var bytes: [UInt8] = []
    private var cachedDay = Int.min
    /// The cached date part and its `T` ("2026-03-01T": 11 bytes, as `CalendarDate` writes years 1–9999 and
    /// the fallback), and its length; the room for more is only a bound.
    private var cachedDayBytes = DayBytes()
    private var cachedDayCount = 0

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func append(_ piece: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: piece) }

    mutating func append(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `Timestamp.rfc3339(date)`, with the date part cached per day.
    mutating func appendTime(_ date: Date) {
        appendTime(micros: Self.micros(date))
    }

    /// The microseconds since 1970 that `Timestamp.rfc3339` writes for `date`.
    static func micros(_ date: Date) -> Int64 {
        let (seconds, micros) = Timestamp.split(date)
        return Int64(seconds) * 1_000_000 + Int64(micros)
    }

    /// `Timestamp.rfc3339` of a time in microseconds since 1970, as PostgreSQL holds it: the date part
    /// formatted once per day, the time of day written as one 8-byte piece.
    mutating func appendTime(micros: Int64) {
        let seconds = Int(micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000)
        let fraction = Int(micros - Int64(seconds) * 1_000_000)
        let day = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        if day != cachedDay {
            cachedDay = day
            let text = Array((CalendarDate(dayNumber: day)?.description ?? "0000-00-00").utf8.prefix(23)) + [UInt8(ascii: "T")]
            cachedDayCount = text.count
            text.withUnsafeBytes { source in withUnsafeMutableBytes(of: &cachedDayBytes.bytes) { $0.copyMemory(from: source) } }
        }
        withUnsafeBytes(of: cachedDayBytes.bytes) { appendBytes($0, from: 0, to: cachedDayCount) }
        let rest = seconds - day * 86_400
        let (hours, minutes, secs) = (rest / 3600, rest % 3600 / 60, rest % 60)
        var clock: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (
            UInt8(truncatingIfNeeded: 48 + hours / 10), UInt8(truncatingIfNeeded: 48 + hours % 10), UInt8(ascii: ":"),
            UInt8(truncatingIfNeeded: 48 + minutes / 10), UInt8(truncatingIfNeeded: 48 + minutes % 10), UInt8(ascii: ":"),
            UInt8(truncatingIfNeeded: 48 + secs / 10), UInt8(truncatingIfNeeded: 48 + secs % 10)
        )
        withUnsafeBytes(of: &clock) { appendBytes($0, from: 0, to: 8) }
        if fraction != 0 {
            var digits = fraction
            var width = 6
            while digits % 10 == 0 {
                digits /= 10
                width -= 1
            }
            bytes.append(UInt8(ascii: "."))
            appendDigits(digits, width: width)
        }
        bytes.append(UInt8(ascii: "Z"))
    }

    mutating func appendDigits(_ value: Int, width: Int) {
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        // Written from the end of the tuple backwards, then appended in one piece.
        var start = 20
        var rest = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                start -= 1
                buffer[start] = UInt8(truncatingIfNeeded: 48 + rest % 10)
                rest /= 10
            } while start > 0 && (rest > 0 || 20 - start < width)
            appendBytes(UnsafeRawBufferPointer(buffer), from: start, to: 20)
        }
    }

    /// Bytes `start..<end` of a tuple of `UInt8`s, in one copy (a raw buffer's slice is appended a byte at a time).
    private mutating func appendBytes(_ tuple: UnsafeRawBufferPointer, from start: Int, to end: Int) {
        let base = tuple.baseAddress!.assumingMemoryBound(to: UInt8.self)
        bytes.append(contentsOf: UnsafeBufferPointer(start: base + start, count: end - start))
    }

    /// Shortest round-trip form, as `Self.number` gives it, written without building a String for the
    /// common case of up to three decimals.
    mutating func appendNumber(_ value: Double) {
        guard value >= 0, value < 1e12 else {
            bytes += Array(ReleasedSampleEncoder.number(value).utf8)
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
        bytes += Array(ReleasedSampleEncoder.number(value).utf8)
    }
}

/// A date part's bytes, kept in the struct rather than an array so that writing them retains nothing.
private struct DayBytes {
    var bytes:
        (
            UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
            UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
        ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}
