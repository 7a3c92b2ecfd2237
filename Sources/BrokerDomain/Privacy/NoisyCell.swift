import Foundation

/// A cell's noisy figures, kept whole so they can be stored and combined later (peer statistics): the
/// count, the centred sum (in `resolution` units) and every histogram bin, each with its own noise, and what
/// the cell cost. Nothing in it is exact, so anything computed from it — sums over days, a mean, percentiles,
/// a k gate — is post-processing and costs no further privacy.
struct NoisyCell: Sendable, Equatable {
    var people: Int64
    var centredSum: Int64
    var bins: [Int64]
    var loss: PrivacyLoss
}
