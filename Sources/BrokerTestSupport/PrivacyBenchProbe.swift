import BrokerDomain
import Foundation
import Logging
import PostgresNIO

/// What `d4h bench group-requests` and `d4h bench group-accuracy` measure of the privacy module, with
/// `package` access: visible to the `d4h` executable of this package, not part of the library's API, and
/// unreachable from the server (no route calls it). It reads exact figures about people, so it is for the
/// benchmark databases' synthetic populations only.
///
/// The mechanism is the server's own (`CellAggregateStore`, `CellCalibration`, `CellMechanism`): a bench
/// computes each cell's exact aggregate once and releases it many times, so only the noise varies between
/// draws. The exact figures to compare with come from the SQL group results used before differential
/// privacy (`percentile_cont` over each person's figure), which is also the baseline of the timings.
package enum PrivacyBenchProbe {
    /// One cell's exact aggregate, as the mechanism reads it (opaque outside the module).
    package struct Aggregate: Sendable {
        package var bucketStart: String { exact.bucketStart }
        package var type: SampleType { exact.type }
        let exact: CellAggregate
    }

    /// One cell's exact figures before differential privacy: contributors, mean and percentiles of their
    /// own figures, unclamped (nil figures when nobody contributed).
    package struct ExactCell: Sendable {
        package var bucketStart: String
        package var type: SampleType
        package var people: Int
        package var mean: Double?
        package var p10: Double?
        package var p50: Double?
        package var p90: Double?

        package init(bucketStart: String, type: SampleType, people: Int, mean: Double?, p10: Double?, p50: Double?, p90: Double?) {
            (self.bucketStart, self.type, self.people, self.mean) = (bucketStart, type, people, mean)
            (self.p10, self.p50, self.p90) = (p10, p50, p90)
        }
    }

    /// The cohort of a request as the service selects it (in a transaction with its sort memory), before
    /// the people's yearly caps.
    package static func cohort(
        filters: [GroupRequest.Filter], demographics: GroupRequest.Demographics, from: CalendarDate, to: CalendarDate,
        client: DatabasePool, logger: Logger
    ) async throws -> [Int32] {
        try await client.withTransaction(logger: logger) { connection in
            try await GroupCohortStore.allowLargeSorts(on: connection, logger: logger)
            return try await GroupCohortStore.cohort(
                filters: filters, demographics: demographics, from: from, to: to, excludingBlocksOf: nil, on: connection, logger: logger)
        }
    }

    /// The exact aggregates of one type's cells, exactly as a release computes them.
    package static func aggregates(
        cohort: [Int32], type: SampleType, bucket: Statistics.Bucket, from: CalendarDate, to: CalendarDate, client: DatabasePool,
        logger: Logger
    ) async throws -> [Aggregate] {
        try await client.withTransaction(logger: logger) { connection in
            try await GroupCohortStore.allowLargeSorts(on: connection, logger: logger)
            return try await CellAggregateStore.groupCells(
                cohort: cohort, type: type, bucket: bucket, from: from, to: to, on: connection, logger: logger
            ).map(Aggregate.init)
        }
    }

    /// One release of `aggregate` at ρ = `rho` per cell with gate `minimumPeople`, through `CellMechanism`.
    package static func release(_ aggregate: Aggregate, rho: Double, minimumPeople: Int, noise: any NoiseSource) -> GroupResultCell {
        CellMechanism(noise: noise, minimumPeople: minimumPeople)
            .release(aggregate.exact, calibration: CellCalibration(type: aggregate.type, loss: PrivacyLoss(rho: rho)))
    }

    /// The same release without noise: what clamping, rounding and the histogram's bins alone do to the
    /// figures. Never reachable from the server, which always has `SecureNoise`.
    package static func releaseWithoutNoise(_ aggregate: Aggregate, rho: Double) -> GroupResultCell {
        release(aggregate, rho: rho, minimumPeople: 0, noise: NoNoise())
    }

    /// One type's cells as group results computed them before differential privacy (until issue 16): per
    /// bucket, the exact count, mean and p10/p50/p90 (`percentile_cont`) of each contributor's own figure
    /// over the daily rollups, every bucket of the range included.
    package static func exactCells(
        cohort: [Int32], type: SampleType, bucket: Statistics.Bucket, from: CalendarDate, to: CalendarDate, client: DatabasePool,
        logger: Logger
    ) async throws -> [ExactCell] {
        try await client.withTransaction(logger: logger) { connection in
            try await GroupCohortStore.allowLargeSorts(on: connection, logger: logger)
            let rows = try await CellAggregateStore.unprotectedCells(
                cohort: cohort, type: type, bucket: bucket, from: from, to: to, on: connection, logger: logger)
            var found: [String: ExactCell] = [:]
            for (start, people, mean, percentiles) in rows {
                found[start] = ExactCell(
                    bucketStart: start, type: type, people: Int(people), mean: mean, p10: percentiles[0], p50: percentiles[1],
                    p90: percentiles[2])
            }
            return bucket.starts(from: from, to: to).map {
                found[$0.description] ?? ExactCell(bucketStart: $0.description, type: type, people: 0, mean: nil, p10: nil, p50: nil, p90: nil)
            }
        }
    }

    /// Per bucket of one type's cells, every contributor's figure clamped to the type's bounds, ascending:
    /// the figures the mechanism counts, sums and bins (`CellAggregateStore.clampedFigures`). For a bench's
    /// exact percentiles and its baselines; the bench writes them only to its own files, never to output.
    package static func clampedFigures(
        cohort: [Int32], type: SampleType, bucket: Statistics.Bucket, from: CalendarDate, to: CalendarDate, client: DatabasePool,
        logger: Logger
    ) async throws -> [String: [Double]] {
        try await client.withTransaction(logger: logger) { connection in
            try await GroupCohortStore.allowLargeSorts(on: connection, logger: logger)
            return try await CellAggregateStore.clampedFigures(
                cohort: cohort, type: type, bucket: bucket, from: from, to: to, on: connection, logger: logger)
        }
    }

    /// The (ε, δ)-DP guarantee of a total loss ρ (zCDP), as the server states it.
    package static func epsilon(rho: Double, delta: Double) -> Double { PrivacyLoss(rho: rho).epsilon(delta: delta) }

    /// The type's contribution bounds (lower, upper, resolution, bins), for the tables' captions.
    package static func bounds(of type: SampleType) -> (lower: Double, upper: Double, resolution: Double, bins: Int) {
        let b = ContributionBounds.of(type)
        return (b.lower, b.upper, b.resolution, b.bins)
    }
}
