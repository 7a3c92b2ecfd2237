import Foundation

/// How long a condition must last: `readings` consecutive critical readings of the rule's type, the first
/// and the last no more than `within` seconds apart. One artefact must never call an ambulance.
public struct SOSPersistence: Sendable, Hashable, Codable {
    public var readings: Int
    public var within: TimeInterval

    public init(readings: Int, within: TimeInterval) {
        self.readings = readings
        self.within = within
    }

    /// Two consecutive readings within 5 minutes.
    public static let `default` = SOSPersistence(readings: 2, within: 5 * 60)
}
