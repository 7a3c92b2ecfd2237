/// Coins whose probability of coming up `true` is exactly a rational number, or exactly e to the minus a rational
/// number, decided by comparing uniform integers: no floating point, so nothing is rounded and the probabilities
/// are the ones the privacy proof assumes (floating-point samplers leak through their rounding; Mironov 2012).
enum ExactBernoulli {
    /// `true` with probability numerator/denominator (0 ≤ numerator ≤ denominator, denominator > 0).
    static func ratio(
        numerator: UInt128, denominator: UInt128, using generator: inout some RandomNumberGenerator
    ) -> Bool {
        precondition(denominator > 0 && numerator <= denominator, "a probability lies in [0, 1]")
        return UniformInteger.below(denominator, using: &generator) < numerator
    }

    /// `true` with probability exp(−γ) for γ = numerator/denominator ≥ 0 (Canonne, Kamath and Steinke 2020,
    /// Algorithm 1).
    ///
    /// exp(−γ) = exp(−1)^⌊γ⌋ · exp(−(γ − ⌊γ⌋)), so the coin is ⌊γ⌋ independent exp(−1) coins and one for the
    /// fractional part, all of which must come up `true`. Stopping at the first `false` keeps this short however
    /// large γ is: each exp(−1) coin fails with probability 1 − 1/e ≈ 0.63, about 1.6 coins on average.
    static func exp(
        numerator: UInt128, denominator: UInt128, using generator: inout some RandomNumberGenerator
    ) -> Bool {
        precondition(denominator > 0, "γ needs a positive denominator")
        var (whole, fraction) = numerator.quotientAndRemainder(dividingBy: denominator)
        while whole > 0 {
            guard expOfAtMostOne(numerator: 1, denominator: 1, using: &generator) else { return false }
            whole -= 1
        }
        return expOfAtMostOne(numerator: fraction, denominator: denominator, using: &generator)
    }

    /// exp(−γ) for γ = numerator/denominator in [0, 1], by von Neumann's method: draw coins Bernoulli(γ/k) for
    /// k = 1, 2, … until one is `false`, and answer whether that happened at an odd k. The first k coins all come
    /// up `true` with probability γ^k/k!, so the stop is at an odd k with probability Σ (−γ)^k/k! = exp(−γ).
    private static func expOfAtMostOne(
        numerator: UInt128, denominator: UInt128, using generator: inout some RandomNumberGenerator
    ) -> Bool {
        var k: UInt128 = 1
        // Bernoulli(γ/k) as two independent coins, Bernoulli(γ) and Bernoulli(1/k), both `true`: the same
        // probability without the product denominator·k, which could overflow. (k itself passes 20 with
        // probability below 1/20! and can never reach 2^128.)
        while ratio(numerator: numerator, denominator: denominator, using: &generator)
            && ratio(numerator: 1, denominator: k, using: &generator)
        {
            k += 1
        }
        return k % 2 == 1
    }
}
