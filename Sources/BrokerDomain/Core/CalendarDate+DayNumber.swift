/// Days counted from 1970-01-01: day arithmetic (windows, timestamps, synthetic data) with integers instead of a
/// `Calendar`, which is slow and, for a deterministic generator, one more thing that could vary.
extension CalendarDate {
    /// Days since 1970-01-01 (negative before it). Howard Hinnant's `days_from_civil`.
    package var dayNumber: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The day `dayNumber` days after 1970-01-01 (`civil_from_days`); nil outside years 1–9999.
    package init?(dayNumber: Int) {
        let z = dayNumber + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        self.init(year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month: month, day: day)
    }

    /// The day `days` after this one (before, when negative).
    package func adding(days: Int) -> CalendarDate {
        CalendarDate(dayNumber: dayNumber + days)!
    }

    /// 0 for Monday … 6 for Sunday (1970-01-01 was a Thursday).
    package static func weekday(ofDayNumber dayNumber: Int) -> Int {
        ((dayNumber % 7) + 7 + 3) % 7
    }
}
