/// Which side of its threshold makes a reading critical. Strict on both sides, as the original
/// specification words it ("above 140", "below 90"): a reading equal to the threshold is not critical.
public enum SOSComparison: String, Sendable, Codable {
    case below
    case above

    func isCritical(_ value: Double, threshold: Double) -> Bool {
        switch self {
        case .below: value < threshold
        case .above: value > threshold
        }
    }
}
