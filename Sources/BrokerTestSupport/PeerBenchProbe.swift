import BrokerDomain
import Foundation
import Logging

/// What `d4h-dev bench peer-accuracy` needs of peer statistics' monthly cells: each cell's exact aggregate
/// as publishing computes it (`PeerCellStore.exactCells`), the exact median it is judged against, and the
/// mechanism's release and margins — so the bench measures the server's own code, only the noise varying.
package enum PeerBenchProbe {
    /// One sex and band of one month and type: its exact aggregate (opaque) and yardstick.
    package struct Cell: Sendable {
        package var sex: Sex
        package var ageFrom: Int
        package var type: SampleType
        /// People with data of the type that month, and the exact median of their clamped month figures.
        package var people: Int
        package var median: Double
        let aggregate: CellAggregate
    }

    /// Every band of `month` with anyone in it, for `type`.
    package static func cells(month: CalendarDate, type: SampleType, client: DatabasePool, logger: Logger) async throws -> [Cell] {
        try await client.withConnection { connection in
            let aggregates = try await PeerCellStore.exactCells(month: month, type: type, on: connection, logger: logger)
            let medians = try await PeerCellStore.exactMedians(month: month, type: type, on: connection, logger: logger)
            return medians.compactMap { exact in
                guard let cell = aggregates.first(where: { $0.sex == exact.sex && $0.ageFrom == exact.ageFrom }) else { return nil }
                return Cell(
                    sex: exact.sex, ageFrom: exact.ageFrom, type: type, people: exact.people, median: exact.median, aggregate: cell.aggregate)
            }
        }
    }

    /// One release of `cell` as publishing makes it, at the settings' peer cell loss, with its margins and
    /// whether a page would show its median (the noisy count reaches k and the margin meets the target).
    package static func release(_ cell: Cell, settings: PrivacySettings, minimumPeople: Int, noise: any NoiseSource)
        -> (figures: PeerFigures, p50Margin95: Double, shown: Bool)
    {
        let mechanism = CellMechanism(noise: noise, minimumPeople: minimumPeople)
        let figures = mechanism.peerFigures(
            cell.aggregate, calibration: CellCalibration(type: cell.type, loss: settings.peerCellLoss, split: .peerCell))
        let margins = CellMechanism.margins95(figures, type: cell.type)
        return (figures, margins.p50, mechanism.shown(figures, type: cell.type)?.p50 != nil)
    }
}
