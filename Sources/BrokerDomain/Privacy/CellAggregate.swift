/// The exact figures of one cell — how many people contributed, the sum of their clamped figures, and
/// how many fall in each histogram bin — as the database computes them for `CellMechanism`, the only code
/// that reads them. They never leave the server: nothing encodes or prints this type, and the mechanism
/// turns it into a released cell only by adding noise.
package struct CellAggregate: Sendable {
    package var bucketStart: String
    package var type: SampleType
    var people: Int64
    /// Σ round((clamp(figure) − middle) / resolution) over the contributors (`ContributionBounds`).
    var centredSum: Int64
    /// People by place on the percentiles' grid, `2·bins + 1` long (`CellAggregateStore.gridPosition`): entry
    /// 2j counts the figures on candidate j = lower + j·step, entry 2j + 1 those between candidates j and j + 1.
    var bins: [Int64]

    /// A cell nobody contributed to: it is released (or suppressed) through the same noise as any other,
    /// so "no one" and "a few" cannot be told apart.
    static func empty(bucketStart: String, type: SampleType) -> CellAggregate {
        .init(
            bucketStart: bucketStart, type: type, people: 0, centredSum: 0, bins: Array(repeating: 0, count: 2 * ContributionBounds.of(type).bins + 1)
        )
    }
}

extension CellAggregate {
    /// From the SQL of `CellAggregateStore.aggregates`: the occupied candidates' indices and their people.
    init(bucketStart: String, type: SampleType, people: Int64, centredSum: Int64, binIndices: [Int32], binCounts: [Int64]) {
        var histogram = [Int64](repeating: 0, count: 2 * ContributionBounds.of(type).bins + 1)
        for (bin, count) in zip(binIndices, binCounts) where histogram.indices.contains(Int(bin)) { histogram[Int(bin)] = count }
        self.init(bucketStart: bucketStart, type: type, people: people, centredSum: centredSum, bins: histogram)
    }
}

extension CellAggregate: CustomStringConvertible {
    /// Exact figures must not reach a log line by accident.
    package var description: String { "CellAggregate(\(bucketStart), \(type.rawValue), <redacted>)" }
}
