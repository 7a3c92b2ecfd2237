import Foundation

/// An amount of privacy loss under zero-concentrated differential privacy (ρ-zCDP, Bun and Steinke 2016),
/// kept in millionths of ρ so the ledger adds and compares whole numbers: sums of Doubles would drift, and
/// a budget check must never let a release through on a rounding error.
///
/// Why zCDP and Gaussian noise: a release has many cells and a person contributes to each; under zCDP the
/// losses of the cells simply add (ρ₁ + ρ₂), and Gaussian noise for a given total loss grows with the square
/// root of the number of cells where Laplace noise under pure ε-DP grows linearly. For the 7–400 cells of a
/// typical release that is 2.6–20 times less noise for the same guarantee.
package struct PrivacyLoss: Sendable, Hashable, Comparable, Codable {
    var micro: Int64

    init(micro: Int64) { self.micro = micro }

    /// Rounded *up* to a millionth: a debit is never smaller than the loss it stands for.
    package init(rho: Double) { micro = Int64((rho * 1_000_000).rounded(.up)) }

    static let zero = PrivacyLoss(micro: 0)

    package var rho: Double { Double(micro) / 1_000_000 }

    static func + (a: Self, b: Self) -> Self { .init(micro: a.micro + b.micro) }
    static func - (a: Self, b: Self) -> Self { .init(micro: a.micro - b.micro) }
    static func * (a: Self, n: Int) -> Self { .init(micro: a.micro * Int64(n)) }
    package static func < (a: Self, b: Self) -> Bool { a.micro < b.micro }

    /// The (ε, δ)-DP guarantee this loss implies: ε = ρ + 2·√(ρ·ln(1/δ)) (Bun and Steinke 2016, Prop. 1.3).
    package func epsilon(delta: Double) -> Double { rho + 2 * (rho * log(1 / delta)).squareRoot() }
}
