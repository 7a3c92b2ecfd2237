import Foundation

/// One stored peer cell: the noisy figures of one sex, ten-year age band and type on one local day.
struct PeerCell: Sendable, Equatable {
    var sex: Sex
    var ageFrom: Int
    var type: SampleType
    var figures: NoisyCell
}
