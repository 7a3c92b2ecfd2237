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
}
