import Foundation

/// Figures composed from noisy cells of one type (a peer bucket: its days' cells), ready to show.
struct ComposedCell: Sendable, Equatable {
    /// Cells composed (days of a peer bucket).
    var cells: Int
    /// The mean noisy count per cell: for one day, that day's noisy count; for a week, the mean day's.
    var people: Double
    /// Middle + Σ noisy sums / Σ noisy counts, clamped to the bounds, to the resolution.
    var mean: Double
    /// From the summed noisy histograms: for several days, percentiles of peers' days (each person-day is one value).
    var p10, p50, p90: Double
    /// Half the width of the 95 % intervals the noise leaves around `mean` and `people`.
    var meanMargin95: Double
    var peopleMargin95: Double
}
