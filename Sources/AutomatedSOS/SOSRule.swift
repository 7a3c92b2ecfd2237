import Foundation

/// One condition that calls for help: readings of `type` on the `comparison` side of `threshold`,
/// persisting for `persistence`, alerting at most once per `cooldown`.
public struct SOSRule: Sendable, Hashable, Codable {
    /// A stable name, shown in alerts and logs (e.g. `heart_rate_high`).
    public var id: String
    public var type: SOSSampleType
    public var comparison: SOSComparison
    public var threshold: SOSThreshold
    public var persistence: SOSPersistence
    /// Seconds after an alert during which the same rule does not alert again.
    public var cooldown: TimeInterval
    /// Whether the rule is ignored while the person is active (see `SOSActivity`): a fast heart on a run is normal.
    public var suppressedWhileActive: Bool

    public init(
        id: String, type: SOSSampleType, comparison: SOSComparison, threshold: SOSThreshold,
        persistence: SOSPersistence = .default, cooldown: TimeInterval = 15 * 60, suppressedWhileActive: Bool = false
    ) {
        self.id = id
        self.type = type
        self.comparison = comparison
        self.threshold = threshold
        self.persistence = persistence
        self.cooldown = cooldown
        self.suppressedWhileActive = suppressedWhileActive
    }
}

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

/// When the person counts as active: more than `stepThreshold` steps in the `window` seconds before a reading.
public struct SOSActivity: Sendable, Hashable, Codable {
    public var stepThreshold: Double
    public var window: TimeInterval

    public init(stepThreshold: Double, window: TimeInterval) {
        self.stepThreshold = stepThreshold
        self.window = window
    }

    /// More than 200 steps in 10 minutes: about two minutes of walking, well above shuffling around a room.
    public static let `default` = SOSActivity(stepThreshold: 200, window: 10 * 60)
}
