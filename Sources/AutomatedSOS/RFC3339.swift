import Foundation

/// A parser for the one time format traces use, `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, straight from
/// the bytes. Foundation's ISO 8601 parser costs microseconds a line, which dominates a replay of millions
/// of lines, and it is lenient where a trace should not be (a missing time zone, 30 February).
enum RFC3339 {
    static func parse<Bytes: RandomAccessCollection>(_ bytes: Bytes) -> Date? where Bytes.Element == UInt8, Bytes.Index == Int {
        var i = bytes.startIndex
        let end = bytes.endIndex
        func digits(_ count: Int) -> Int? {
            guard end - i >= count else { return nil }
            var value = 0
            for _ in 0..<count {
                let d = Int(bytes[i]) - 48
                guard (0...9).contains(d) else { return nil }
                value = value * 10 + d
                i += 1
            }
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard i < end, bytes[i] == byte else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(UInt8(ascii: "-")), let month = digits(2), expect(UInt8(ascii: "-")),
            let day = digits(2)
        else { return nil }
        guard i < end, bytes[i] == UInt8(ascii: "T") || bytes[i] == UInt8(ascii: "t") else { return nil }
        i += 1
        guard let hour = digits(2), expect(UInt8(ascii: ":")), let minute = digits(2), expect(UInt8(ascii: ":")),
            let second = digits(2)
        else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60,
            second < 60
        else { return nil }
        var fraction = 0.0
        if i < end, bytes[i] == UInt8(ascii: ".") {
            i += 1
            // Up to nanoseconds as an integer, then one division: no rounding error builds up digit by digit.
            var numerator = 0
            var denominator = 1
            let first = i
            while i < end, (48...57).contains(bytes[i]) {
                if denominator < 1_000_000_000 {
                    numerator = numerator * 10 + Int(bytes[i] - 48)
                    denominator *= 10
                }
                i += 1
            }
            guard i > first else { return nil }
            fraction = Double(numerator) / Double(denominator)
        }
        guard i < end else { return nil }
        var offset = 0
        switch bytes[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            i += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = bytes[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let h = digits(2), expect(UInt8(ascii: ":")), let m = digits(2), h < 24, m < 60 else { return nil }
            offset = sign * (h * 3600 + m * 60)
        default:
            return nil
        }
        guard i == end else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let unix = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
        return Date(timeIntervalSince1970: unix)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant, "chrono-Compatible Low-Level
    /// Date Algorithms").
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
