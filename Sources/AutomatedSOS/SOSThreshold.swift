/// The threshold of a rule: a constant, or one of the named age-dependent tables. Named tables rather
/// than closures keep a policy `Codable`, so it can be stored and shipped as data.
public enum SOSThreshold: Sendable, Hashable, Codable {
    case constant(Double)
    /// `HeartRateBounds.low(age:)`
    case heartRateLow
    /// `HeartRateBounds.high(age:)`
    case heartRateHigh

    /// The threshold for a person of `age` years.
    public func value(age: Int) -> Double {
        switch self {
        case .constant(let value): value
        case .heartRateLow: HeartRateBounds.low(age: age)
        case .heartRateHigh: HeartRateBounds.high(age: age)
        }
    }
}
