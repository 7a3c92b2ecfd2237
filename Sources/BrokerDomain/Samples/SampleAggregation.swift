import Foundation

/// How a person's samples of one type make one figure for one of their local days.
package enum SampleAggregation: String, Sendable, Codable {
    /// Counted quantities recorded in many short pieces (steps, distance, energy, stand and sleep time): the
    /// day's figure is their total. A week or month is the mean of the person's daily totals on the days
    /// they have any; min and max are the smallest and largest daily total.
    case dailyTotal = "daily_total"
    /// Readings of a state at one moment (heart rate, pressure, weight …): the day's figure is the mean of
    /// its readings; min and max are the extreme readings.
    case mean
}
