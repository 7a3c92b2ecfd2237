/// Percentiles read from a noisy histogram (post-processing: no further privacy loss). Negative noisy
/// bins count as empty; within a bin, people are taken as spread evenly, so a percentile is interpolated
/// linearly between the bin's edges. Its accuracy is about a bin's width where many people are, and worse
/// in sparse tails.
enum NoisyPercentiles {
    static func percentile(_ q: Double, of bins: [Int64], bounds: ContributionBounds) -> Double? {
        let counts = bins.map { Double(max(0, $0)) }
        let total = counts.reduce(0, +)
        guard total > 0 else { return nil }
        let target = q * total
        var below = 0.0
        for (index, count) in counts.enumerated() where count > 0 {
            if below + count >= target {
                let fraction = (target - below) / count
                return bounds.lower + (Double(index) + fraction) * bounds.binWidth
            }
            below += count
        }
        return bounds.upper
    }
}
