import Foundation

/// RFC 3339 timestamps parsed and printed by hand: a 10,000-sample upload must not spend longer in
/// date formatters than in COPY. Precision is the microsecond, as in PostgreSQL.
package enum Timestamp {
    /// The years accepted. A `Date` is a Double of seconds since 1970: within these years it resolves
    /// well below a microsecond, far from them it cannot (and no health sample is dated there).
    package static let years = 1900...2199

    /// Parses `2026-03-01T08:00:00Z`, `2026-03-01T08:00:00.25+01:00` (a space or `t` may stand for `T`, `z` for `Z`).
    package static func parse(_ text: some StringProtocol) -> Date? {
        var bytes = Array(text.utf8)[...]
        func number(_ count: Int) -> Int? {
            guard bytes.count >= count else { return nil }
            var value = 0
            for byte in bytes.prefix(count) {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            bytes = bytes.dropFirst(count)
            return value
        }
        func expect(_ characters: UInt8...) -> Bool {
            guard let first = bytes.first, characters.contains(first) else { return false }
            bytes = bytes.dropFirst()
            return true
        }
        guard let year = number(4), expect(45), let month = number(2), expect(45), let day = number(2),
            expect(84, 116, 32), let hour = number(2), expect(58), let minute = number(2), expect(58),
            let second = number(2),
            years.contains(year), let date = CalendarDate(year: year, month: month, day: day), hour < 24, minute < 60,
            second < 60
        else { return nil }
        var micros = 0
        if bytes.first == 46 {  // "."
            bytes = bytes.dropFirst()
            var digits = 0
            while let byte = bytes.first, byte >= 48, byte <= 57 {
                if digits < 6 { micros = micros * 10 + Int(byte - 48) }
                digits += 1
                bytes = bytes.dropFirst()
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 6) { micros *= 10 }
        }
        var offsetSeconds = 0
        if expect(90, 122) {  // Z
        } else if let sign = bytes.first, sign == 43 || sign == 45 {
            bytes = bytes.dropFirst()
            guard let offsetHours = number(2), expect(58), let offsetMinutes = number(2), offsetHours < 24, offsetMinutes < 60
            else { return nil }
            offsetSeconds = (offsetHours * 3600 + offsetMinutes * 60) * (sign == 45 ? -1 : 1)
        } else {
            return nil
        }
        guard bytes.isEmpty else { return nil }
        let seconds = date.dayNumber * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: Double(seconds) + Double(micros) / 1_000_000)
    }

    /// `2026-03-01 08:00:00.250000+00`: PostgreSQL's COPY text form of a timestamptz.
    package static func postgresText(_ date: Date) -> String {
        let (seconds, micros) = split(date)
        let (year, month, day, hour, minute, second) = civil(seconds)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2)) \(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(micros, 6))+00"
    }

    /// `2026-03-01T08:00:00Z`, with `.ffffff` only when the time has a fraction.
    package static func rfc3339(_ date: Date) -> String {
        let (seconds, micros) = split(date)
        let (year, month, day, hour, minute, second) = civil(seconds)
        var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
        if micros != 0 {
            var fraction = pad(micros, 6)
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "Z"
    }

    static func split(_ date: Date) -> (seconds: Int, micros: Int) {
        let total = Int((date.timeIntervalSince1970 * 1_000_000).rounded())
        let seconds = total >= 0 ? total / 1_000_000 : (total - 999_999) / 1_000_000
        return (seconds, total - seconds * 1_000_000)
    }

    static func civil(_ seconds: Int) -> (Int, Int, Int, Int, Int, Int) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = seconds - days * 86_400
        let date = CalendarDate(dayNumber: days)!
        return (date.year, date.month, date.day, rest / 3600, rest % 3600 / 60, rest % 60)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}

extension Timestamp {
    /// `rfc3339(date)` written straight into a byte buffer: downloads format millions of these.
    static func appendRFC3339(_ date: Date, to bytes: inout [UInt8]) {
        let (seconds, micros) = split(date)
        let (year, month, day, hour, minute, second) = civil(seconds)
        appendDigits(year, 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(month, 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(day, 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(hour, 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(minute, 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(second, 2, to: &bytes)
        if micros != 0 {
            var fraction = micros
            var width = 6
            while fraction % 10 == 0 {
                fraction /= 10
                width -= 1
            }
            bytes.append(UInt8(ascii: "."))
            appendDigits(fraction, width, to: &bytes)
        }
        bytes.append(UInt8(ascii: "Z"))
    }

    private static func appendDigits(_ value: Int, _ width: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }
}
