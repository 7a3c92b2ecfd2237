// TEMPORARY until the noise branch is merged (then deleted).
public protocol NoiseSource: Sendable { func discreteGaussian(variance: UInt64) -> Int64 }
public struct SecureNoise: NoiseSource { public init() {}; public func discreteGaussian(variance: UInt64) -> Int64 { 0 } }
struct NoNoise: NoiseSource { func discreteGaussian(variance: UInt64) -> Int64 { 0 } }
