import Foundation

/// The wall clock the domain reads "now" from for its own decisions: a run's state, which buckets have
/// closed, a sample from the future, today's date, the times it stamps. The composition root hands every
/// service the one from `BrokerConfiguration.clock`, so a test sets the time (or moves it by hand) instead
/// of sleeping until it passes. Only for reading the time of day: waits and durations take a `Clock`
/// (monotonic, `ContinuousClock` in production), which neither a test's wall clock nor NTP moves.
package struct WallClock: Sendable {
    private let reading: @Sendable () -> Date

    /// A clock that answers `reading()`; a test's stands still or follows a time it moves.
    package init(_ reading: @escaping @Sendable () -> Date) {
        self.reading = reading
    }

    /// The system's time: the server's, and the default of tools and tests that run no server.
    package static let system = WallClock { Date() }

    /// A clock that stands still at `date`.
    package static func fixed(_ date: Date) -> WallClock { WallClock { date } }

    package var now: Date { reading() }

    /// Today in UTC, the server's clock zone, so a day is judged the same on every host.
    package var today: CalendarDate { CalendarDate(now, in: .utc) }
}
