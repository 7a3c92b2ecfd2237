import Foundation

/// A day on the Gregorian calendar, without time or time zone, written `YYYY-MM-DD`.
package struct CalendarDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    package let year: Int
    package let month: Int
    package let day: Int

    /// Fails unless the three numbers name a day that exists (31 April and 29 February 2023 do not).
    package init?(year: Int, month: Int, day: Int) {
        // Four-digit years only, so `description` always round-trips through `init?(iso:)`.
        guard (1...9999).contains(year), (1...12).contains(month),
            (1...CalendarDate.numberOfDays(inMonth: month, year: year)).contains(day)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The day `date` falls on in `timeZone`; meant for dates in years 1–9999, like the rest of this type.
    package init(_ date: Date, in timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        self.year = parts.year!
        self.month = parts.month!
        self.day = parts.day!
    }

    /// Today in UTC on the system's clock, for tools and tests; the domain reads its service's `clock.today`.
    package static var today: CalendarDate {
        WallClock.system.today
    }

    /// Parses exactly `YYYY-MM-DD` (ASCII digits, zero-padded); anything else, or a day that does not exist, is nil.
    package init?(iso text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let year = Self.number(bytes[0..<4]),
            let month = Self.number(bytes[5..<7]),
            let day = Self.number(bytes[8..<10])
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    package var description: String {
        Self.padded(year, to: 4) + "-" + Self.padded(month, to: 2) + "-" + Self.padded(day, to: 2)
    }

    package static func < (lhs: CalendarDate, rhs: CalendarDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    package static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    /// Days in `month` (1–12) of `year`; 0 for a month outside 1–12.
    package static func numberOfDays(inMonth month: Int, year: Int) -> Int {
        switch month {
        case 1, 3, 5, 7, 8, 10, 12: 31
        case 4, 6, 9, 11: 30
        case 2: isLeapYear(year) ? 29 : 28
        default: 0
        }
    }

    // Only ASCII digits: `Int(_:)` would also accept a sign, which "YYYY-MM-DD" never contains.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var result = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            result = result * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return result
    }

    private static func padded(_ number: Int, to width: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

extension TimeZone {
    /// Days of samples, rollups and windows are UTC days.
    static let utc = TimeZone(secondsFromGMT: 0)!
}
