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
        persistence: SOSPersistence = .default, cooldown: TimeInterval = Self.defaultCooldown, suppressedWhileActive: Bool = false
    ) {
        self.id = id
        self.type = type
        self.comparison = comparison
        self.threshold = threshold
        self.persistence = persistence
        self.cooldown = cooldown
        self.suppressedWhileActive = suppressedWhileActive
    }

    /// 15 minutes: long enough that one episode prompts once, short enough that a person who dismissed a
    /// prompt and then worsens is asked again.
    public static let defaultCooldown: TimeInterval = 15 * 60
}
