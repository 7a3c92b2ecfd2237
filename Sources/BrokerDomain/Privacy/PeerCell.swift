import Foundation

/// One stored peer cell: the noisy figures of one sex, ten-year age band and type in one calendar month.
struct PeerCell: Sendable, Equatable {
    var sex: Sex
    var ageFrom: Int
    var type: SampleType
    var figures: PeerFigures
}

/// A peer cell's released figures, as stored (`peer_month_cells`): a noisy count and the three percentiles
/// the exponential mechanism drew (`QuantileMechanism`), and what the cell cost. Nothing in it is exact, so
/// everything computed from it — the k gate, the margins, whether a figure meets its target — is
/// post-processing and costs no further privacy.
package struct PeerFigures: Sendable, Equatable {
    package var people: Int64
    package var p10, p50, p90: Double
    package var loss: PrivacyLoss
}
