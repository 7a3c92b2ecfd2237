import Foundation

/// The table of rules a monitor evaluates; data, so it can be stored, shipped and tested as such.
public struct SOSPolicy: Sendable, Hashable, Codable {
    public var rules: [SOSRule]
    public var activity: SOSActivity

    public init(rules: [SOSRule], activity: SOSActivity = .default) {
        self.rules = rules
        self.activity = activity
    }

    /// The original system's thresholds, plus oxygen saturation and fever.
    ///
    /// - heart rate below or above the age-dependent bounds of `HeartRateBounds` (the high bound is
    ///   ignored during activity);
    /// - stage 2 hypertension as the original specification states it: systolic above 140 or diastolic
    ///   above 90 mmHg (two rules, so either alone alerts);
    /// - hypotension: systolic below 90 or diastolic below 60 mmHg;
    /// - oxygen saturation below 90 % at rest, or below 85 % at any time (`OxygenSaturationBounds`);
    /// - body temperature above 40 °C (`BodyTemperatureBounds`).
    ///
    /// `docs/examples/sos-policy.json` is this policy as a file (a test keeps them equal).
    public static let `default` = SOSPolicy(rules: [
        SOSRule(id: "heart_rate_low", type: .heartRate, comparison: .below, threshold: .heartRateLow),
        SOSRule(id: "heart_rate_high", type: .heartRate, comparison: .above, threshold: .heartRateHigh, suppressedWhileActive: true),
        SOSRule(id: "hypertension_systolic", type: .systolicPressure, comparison: .above, threshold: .constant(140)),
        SOSRule(id: "hypertension_diastolic", type: .diastolicPressure, comparison: .above, threshold: .constant(90)),
        SOSRule(id: "hypotension_systolic", type: .systolicPressure, comparison: .below, threshold: .constant(90)),
        SOSRule(id: "hypotension_diastolic", type: .diastolicPressure, comparison: .below, threshold: .constant(60)),
        SOSRule(id: "oxygen_saturation_low", type: .oxygenSaturation, comparison: .below, threshold: .constant(OxygenSaturationBounds.low)),
        SOSRule(
            id: "oxygen_saturation_low_at_rest", type: .oxygenSaturation, comparison: .below,
            threshold: .constant(OxygenSaturationBounds.lowAtRest), persistence: OxygenSaturationBounds.atRestPersistence,
            suppressedWhileActive: true),
        SOSRule(
            id: "body_temperature_high", type: .bodyTemperature, comparison: .above, threshold: .constant(BodyTemperatureBounds.high),
            persistence: BodyTemperatureBounds.persistence),
    ])
}
