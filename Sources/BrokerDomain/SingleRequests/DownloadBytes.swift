import Foundation

/// The bytes of one download chunk, and the writers the download encoders share for what every row holds:
/// a time (RFC 3339, the date part formatted once per day) and a number (the shortest form that reads back,
/// without building a String for up to three decimals). A download of a million samples is a million of
/// each, so these are written by hand rather than through `Timestamp.rfc3339` and `Double.description`.
struct DownloadBytes {
    var bytes: [UInt8] = []
    private var cachedDay = Int.min
    private var cachedDayBytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

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
            cachedDayBytes = Array((CalendarDate(dayNumber: day)?.description ?? "0000-00-00").utf8) + [UInt8(ascii: "T")]
        }
        bytes += cachedDayBytes
        let rest = seconds - day * 86_400
        let (hours, minutes, secs) = (rest / 3600, rest % 3600 / 60, rest % 60)
        var clock: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (
            UInt8(truncatingIfNeeded: 48 + hours / 10), UInt8(truncatingIfNeeded: 48 + hours % 10), UInt8(ascii: ":"),
            UInt8(truncatingIfNeeded: 48 + minutes / 10), UInt8(truncatingIfNeeded: 48 + minutes % 10), UInt8(ascii: ":"),
            UInt8(truncatingIfNeeded: 48 + secs / 10), UInt8(truncatingIfNeeded: 48 + secs % 10)
        )
        withUnsafeBytes(of: &clock) { bytes.append(contentsOf: $0) }
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
