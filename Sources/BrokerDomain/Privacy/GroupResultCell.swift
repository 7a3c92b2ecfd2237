/// One cell of released results: the distribution across people of their own figures in one bucket,
/// with differential-privacy noise (`CellMechanism`), as released once and stored.
package struct GroupResultCell: Sendable, Equatable, Codable {
    package var bucketStart: String
    package var type: SampleType
    /// Nil when suppressed (the noisy count below k): nothing else about such a cell is released.
    package var people: Int?
    package var mean: Double?
    package var p10: Double?
    package var p50: Double?
    package var p90: Double?
    package var suppressed: Bool
    /// How much noise the figures carry (nil only in releases from before differential privacy).
    package var accuracy: CellAccuracy?

    package init(bucketStart: String, type: SampleType, people: Int?, mean: Double?, p10: Double?, p50: Double?, p90: Double?, suppressed: Bool) {
        (self.bucketStart, self.type, self.people, self.mean) = (bucketStart, type, people, mean)
        (self.p10, self.p50, self.p90, self.suppressed) = (p10, p50, p90, suppressed)
    }
}
