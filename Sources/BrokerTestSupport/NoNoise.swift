import BrokerDomain

/// No noise at all: for functional tests of release flows whose subject is not privacy. It lives in
/// the test-support target, which the server does not link: no configuration can select it.
package struct NoNoise: NoiseSource {
    package init() {}

    /// Always 0, but the variance is still checked, so a caller that would trap in production (variance 0,
    /// or beyond the sampler's range) fails its functional tests too rather than passing them silently.
    package func discreteGaussian(variance: UInt64) -> Int64 {
        DiscreteGaussian.checkVariance(variance)
        return 0
    }

    /// The best candidate (the lowest score; the first of equals): the exact answer the mechanism is centred on.
    package func exponentialMechanism(scores: [UInt64], numerator: UInt64, denominator: UInt64) -> Int {
        precondition(!scores.isEmpty && numerator > 0 && denominator > 0, "the exponential mechanism's arguments")
        return scores.indices.min { scores[$0] < scores[$1] }!
    }
}
