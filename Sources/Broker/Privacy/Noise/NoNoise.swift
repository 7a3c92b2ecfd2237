/// No noise at all: for functional tests of release flows whose subject is not privacy. Only reachable
/// from tests (internal), never from configuration.
struct NoNoise: NoiseSource {
    /// Always 0, but the variance is still checked, so a caller that would trap in production (variance 0,
    /// or beyond the sampler's range) fails its functional tests too rather than passing them silently.
    func discreteGaussian(variance: UInt64) -> Int64 {
        DiscreteGaussian.checkVariance(variance)
        return 0
    }
}
