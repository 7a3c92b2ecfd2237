import Foundation

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
