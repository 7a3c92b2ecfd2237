extension QuantileMechanism {
    /// One draw of the percentile `tenths` (1, 5 or 9) of a cell whose people on each candidate of the grid are
    /// `histogram`, at a loss of `rhoMicro` millionths of ρ: the index of the chosen candidate (0…bins), or nil
    /// for another percentile. For `d4h-dev privacy quantile` alone, whose draws scripts/privacy-noise-check.py
    /// compares with the distribution it computes from the same histogram and ρ: scores, Δ, ε and sampler end
    /// to end, as a release uses them.
    package static func candidate(tenths: Int, histogram: [Int64], rhoMicro: Int64, noise: any NoiseSource) -> Int? {
        guard let percentile = Percentile(rawValue: tenths), !histogram.isEmpty else { return nil }
        // A grid of step 1 from 0 with everyone on a candidate: the released figure is the candidate's index.
        let grid = ContributionBounds(lower: 0, upper: Double(histogram.count - 1), resolution: 1, bins: histogram.count - 1)
        let places: [Int64] = histogram.enumerated().flatMap { index, count -> [Int64] in index == 0 ? [count] : [0, count] }
        return Int(release(percentile, histogram: places, bounds: grid, loss: PrivacyLoss(micro: rhoMicro), noise: noise))
    }
}
