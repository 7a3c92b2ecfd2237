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

/// Parses the decimal numbers of `value` attributes without allocating a String.
enum AppleHealthNumber {
    /// Exact powers of ten: up to 1e22 every one is a Double, so one multiplication or division rounds correctly.
    private static let powersOfTen: [Double] = (0...22).map { pow(10, Double($0)) }

    /// The value of `[+-]digits[.digits][(e|E)[+-]digits]`, or nil for anything else (including `nan`, `inf`, hex).
    static func parse(_ s: UnsafeBufferPointer<UInt8>) -> Double? {
        var k = 0
        let n = s.count
        var negative = false
        if k < n, s[k] == UInt8(ascii: "-") || s[k] == UInt8(ascii: "+") {
            negative = s[k] == UInt8(ascii: "-")
            k += 1
        }
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var exponent = 0
        var sawDigit = false
        while k < n, s[k] &- UInt8(ascii: "0") < 10 {
            sawDigit = true
            accumulate(s[k], &mantissa, &significantDigits, &exponent, afterPoint: false)
            k += 1
        }
        if k < n, s[k] == UInt8(ascii: ".") {
            k += 1
            while k < n, s[k] &- UInt8(ascii: "0") < 10 {
                sawDigit = true
                accumulate(s[k], &mantissa, &significantDigits, &exponent, afterPoint: true)
                k += 1
            }
        }
        guard sawDigit else { return nil }
        if k < n, s[k] == UInt8(ascii: "e") || s[k] == UInt8(ascii: "E") {
            k += 1
            var exponentNegative = false
            if k < n, s[k] == UInt8(ascii: "-") || s[k] == UInt8(ascii: "+") {
                exponentNegative = s[k] == UInt8(ascii: "-")
                k += 1
            }
            var written = 0
            let first = k
            while k < n, s[k] &- UInt8(ascii: "0") < 10 {
                written = min(written * 10 + Int(s[k] &- UInt8(ascii: "0")), 100_000)
                k += 1
            }
            guard k > first else { return nil }
            exponent += exponentNegative ? -written : written
        }
        guard k == n else { return nil }
        // Clinger's fast path: an exact mantissa times an exact power of ten is correctly rounded.
        if significantDigits <= 15, mantissa < (1 << 53), abs(exponent) <= 22 {
            let magnitude =
                exponent >= 0
                ? Double(mantissa) * powersOfTen[exponent]
                : Double(mantissa) / powersOfTen[-exponent]
            return negative ? -magnitude : magnitude
        }
        // Rare: long or extreme numbers go through the standard library's correctly rounded parser.
        return Double(String(decoding: s, as: UTF8.self))
    }

    @inline(__always)
    private static func accumulate(
        _ byte: UInt8, _ mantissa: inout UInt64, _ significantDigits: inout Int, _ exponent: inout Int, afterPoint: Bool
    ) {
        let d = UInt64(byte &- UInt8(ascii: "0"))
        if mantissa == 0 && d == 0 {
            if afterPoint { exponent -= 1 }  // leading zeros only shift the point
            return
        }
        if significantDigits < 19 {
            mantissa = mantissa * 10 + d
            significantDigits += 1
            if afterPoint { exponent -= 1 }
        } else {
            significantDigits += 1  // forces the slow path; digits past the 19th only matter there
            if !afterPoint { exponent += 1 }
        }
    }
}

/// Byte comparisons for the scanner, which never builds a String for a name or value it only compares.
enum AppleHealthBytes {
    /// Byte-wise equality that looks at the lengths first (most identifiers share a 24-byte prefix).
    @inline(__always)
    static func equal(_ a: [UInt8], _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBufferPointer { a in
            a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
        }
    }

    /// Whether `b` begins with `prefix`.
    @inline(__always)
    static func hasPrefix(_ b: UnsafeBufferPointer<UInt8>, _ prefix: [UInt8]) -> Bool {
        guard b.count >= prefix.count else { return false }
        return equal(prefix, UnsafeBufferPointer(rebasing: b[0..<prefix.count]))
    }
}
