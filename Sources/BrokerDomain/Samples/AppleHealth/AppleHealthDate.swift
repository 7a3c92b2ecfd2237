import Foundation

/// Parses the dates of an Apple Health export (`2024-03-01 08:15:00 +0100`) by hand: a DateFormatter per record would
/// dominate the cost of a multi-gigabyte import.
enum AppleHealthDate {
    /// Seconds since 1970 (UTC) of `yyyy-MM-dd HH:mm:ss ±hhmm`; also accepts `T` between date and time, fractional
    /// seconds, `±hh:mm` and `Z`. A date without an offset is ambiguous and gives nil.
    static func secondsSince1970(_ s: UnsafeBufferPointer<UInt8>) -> Double? {
        guard s.count >= 20,
            let year = digits(s, 0, 4), s[4] == UInt8(ascii: "-"),
            let month = digits(s, 5, 2), s[7] == UInt8(ascii: "-"),
            let day = digits(s, 8, 2), s[10] == UInt8(ascii: " ") || s[10] == UInt8(ascii: "T"),
            let hour = digits(s, 11, 2), s[13] == UInt8(ascii: ":"),
            let minute = digits(s, 14, 2), s[16] == UInt8(ascii: ":"),
            let second = digits(s, 17, 2),
            let date = CalendarDate(year: year, month: month, day: day),
            hour < 24, minute < 60, second <= 60
        else { return nil }
        var k = 19
        var fraction = 0.0
        if s[k] == UInt8(ascii: ".") {
            var scale = 0.1
            k += 1
            let first = k
            while k < s.count, let d = digit(s[k]) {
                fraction += Double(d) * scale
                scale /= 10
                k += 1
            }
            guard k > first else { return nil }
        }
        while k < s.count, s[k] == UInt8(ascii: " ") { k += 1 }
        guard k < s.count else { return nil }
        var offset = 0
        switch s[k] {
        case UInt8(ascii: "Z"):
            guard k + 1 == s.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = s[k] == UInt8(ascii: "-") ? -1 : 1
            guard let hours = digits(s, k + 1, 2) else { return nil }
            var m = k + 3
            if m < s.count, s[m] == UInt8(ascii: ":") { m += 1 }
            guard let minutes = digits(s, m, 2), m + 2 == s.count, hours <= 18, minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        default:
            return nil
        }
        let seconds = date.dayNumber * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Double(seconds) + fraction
    }

    /// Convenience for tests and callers holding a String.
    static func date(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { secondsSince1970($0) }.map { Date(timeIntervalSince1970: $0) }
    }

    @inline(__always)
    private static func digit(_ byte: UInt8) -> Int? {
        byte &- UInt8(ascii: "0") < 10 ? Int(byte &- UInt8(ascii: "0")) : nil
    }

    @inline(__always)
    private static func digits(_ s: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> Int? {
        guard start + count <= s.count else { return nil }
        var value = 0
        for k in start..<start + count {
            guard let d = digit(s[k]) else { return nil }
            value = value * 10 + d
        }
        return value
    }
}
