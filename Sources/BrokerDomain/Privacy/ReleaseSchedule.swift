import Foundation

/// When a bucket may be released. A released cell is never recomputed, so a subscription releases each
/// bucket once, after every time zone's last day of it has ended (UTC−12 is the last: its day ends at
/// 12:00 UTC the next day) and `latenessHours` more have passed for late uploads to arrive.
struct ReleaseSchedule: Sendable {
    var latenessHours: Int

    /// The moment the bucket starting on `start` closes for release.
    func closes(_ bucket: Statistics.Bucket, startingOn start: CalendarDate) -> Date {
        let end = bucket.next(after: start)
        let midnight = Date(timeIntervalSince1970: TimeInterval(end.dayNumber) * 86_400)
        return midnight.addingTimeInterval(TimeInterval((12 + latenessHours) * 3600))
    }

    /// The last bucket start (from `first` on) that has closed by `now` and no later than `stop`, or nil.
    func lastClosed(_ bucket: Statistics.Bucket, from first: CalendarDate, now: Date, stop: Date?) -> CalendarDate? {
        let horizon = min(now, stop ?? now)
        var last: CalendarDate?
        var start = bucket.start(of: first)
        while closes(bucket, startingOn: start) <= horizon {
            last = start
            start = bucket.next(after: start)
        }
        return last
    }
}

extension Statistics.Bucket {
    /// The start of the bucket holding `day` (weeks start on Monday, as PostgreSQL's `date_trunc` does).
    package func start(of day: CalendarDate) -> CalendarDate {
        switch self {
        case .day: day
        case .week: day.adding(days: -CalendarDate.weekday(ofDayNumber: day.dayNumber))
        case .month: CalendarDate(year: day.year, month: day.month, day: 1)!
        }
    }

    package func next(after start: CalendarDate) -> CalendarDate {
        switch self {
        case .day: start.adding(days: 1)
        case .week: start.adding(days: 7)
        case .month:
            start.month == 12
                ? CalendarDate(year: start.year + 1, month: 1, day: 1)! : CalendarDate(year: start.year, month: start.month + 1, day: 1)!
        }
    }

    /// Every bucket start from the one holding `from` to the one holding `to`.
    package func starts(from: CalendarDate, to: CalendarDate) -> [CalendarDate] {
        var starts: [CalendarDate] = []
        var start = self.start(of: from)
        while start <= to {
            starts.append(start)
            start = next(after: start)
        }
        return starts
    }
}
