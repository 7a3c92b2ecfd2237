import Foundation

/// A rule's condition has persisted: the person should be asked whether to call for help.
public struct SOSAlert: Sendable, Hashable, Codable {
    /// The rule's `id`.
    public var rule: String
    public var type: SOSSampleType
    public var comparison: SOSComparison
    /// The threshold for the person's age.
    public var threshold: Double
    /// The reading that completed the condition.
    public var value: Double
    public var at: Date

    public init(rule: String, type: SOSSampleType, comparison: SOSComparison, threshold: Double, value: Double, at: Date) {
        self.rule = rule
        self.type = type
        self.comparison = comparison
        self.threshold = threshold
        self.value = value
        self.at = at
    }
}
