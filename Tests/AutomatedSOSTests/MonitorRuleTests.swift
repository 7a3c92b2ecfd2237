import AutomatedSOS
import Foundation
import Testing

/// Every default rule, just past and exactly at its threshold (the spec's comparisons are strict).
@Suite struct MonitorRuleTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var rule: String
        var type: SOSSampleType
        var critical: Double
        var atThreshold: Double
        var age: Int = 45
        var testDescription: String { "\(rule) age \(age)" }
    }

    static let cases: [Case] = [
        Case(rule: "heart_rate_low", type: .heartRate, critical: 39, atThreshold: 40),
        Case(rule: "heart_rate_high", type: .heartRate, critical: 176, atThreshold: 175),
        Case(rule: "heart_rate_low", type: .heartRate, critical: 51, atThreshold: 52, age: 9),
        Case(rule: "heart_rate_high", type: .heartRate, critical: 116, atThreshold: 115, age: 9),
        Case(rule: "heart_rate_high", type: .heartRate, critical: 141, atThreshold: 140, age: 80),
        Case(rule: "hypertension_systolic", type: .systolicPressure, critical: 141, atThreshold: 140),
        Case(rule: "hypertension_diastolic", type: .diastolicPressure, critical: 91, atThreshold: 90),
        Case(rule: "hypotension_systolic", type: .systolicPressure, critical: 89, atThreshold: 90),
        Case(rule: "hypotension_diastolic", type: .diastolicPressure, critical: 59, atThreshold: 60),
        Case(rule: "oxygen_saturation_low", type: .oxygenSaturation, critical: 84, atThreshold: 85),
    ]

    @Test(arguments: cases)
    func twoCriticalReadingsAlert(_ c: Case) {
        var monitor = SOSMonitor(age: c.age)
        let alerts = monitor.feed([sample(c.type, c.critical, minutes: 0), sample(c.type, c.critical, minutes: 1)])
        #expect(alerts.map(\.rule) == [c.rule])
        #expect(alerts.first?.at == at(minutes: 1))
        #expect(alerts.first?.value == c.critical)
        #expect(alerts.first?.threshold == c.atThreshold)
    }

    @Test(arguments: cases)
    func readingsAtTheThresholdDoNotAlert(_ c: Case) {
        var monitor = SOSMonitor(age: c.age)
        #expect(monitor.feed([sample(c.type, c.atThreshold, minutes: 0), sample(c.type, c.atThreshold, minutes: 1)]).isEmpty)
    }

    @Test func heartRateBoundsFollowTheDocumentedTables() {
        #expect(HeartRateBounds.high(age: 30) == 190)
        #expect(HeartRateBounds.high(age: 70) == 150)
        #expect(HeartRateBounds.low(age: 30) == 40)
        // Fleming et al. 2011, 1st and 99th centiles; ages 0 and 1 take the widest range of their bands.
        let fleming: [(ages: ClosedRange<Int>, low: Double, high: Double)] = [
            (0...0, 90, 181), (1...1, 82, 156), (2...2, 76, 142), (3...3, 70, 136), (4...5, 65, 131),
            (6...7, 59, 123), (8...11, 52, 115), (12...14, 47, 108), (15...17, 43, 104),
        ]
        for band in fleming {
            for age in band.ages {
                #expect(HeartRateBounds.low(age: age) == band.low, "low bound at \(age)")
                #expect(HeartRateBounds.high(age: age) == band.high, "high bound at \(age)")
            }
        }
        #expect(HeartRateBounds.high(age: 18) == 202)
        // Children's bounds narrow with age, and the adult ones never invert.
        for age in 0..<120 {
            #expect(HeartRateBounds.low(age: age) < HeartRateBounds.high(age: age))
            #expect(HeartRateBounds.low(age: age + 1) <= HeartRateBounds.low(age: age))
        }
    }

    @Test func aPolicyRoundTripsThroughJSON() throws {
        let data = try JSONEncoder().encode(SOSPolicy.default)
        #expect(try JSONDecoder().decode(SOSPolicy.self, from: data) == .default)
    }

    @Test func aCustomPolicyIsObeyed() {
        let policy = SOSPolicy(rules: [
            SOSRule(
                id: "fever", type: .heartRate, comparison: .above, threshold: .constant(100),
                persistence: SOSPersistence(readings: 3, within: 120), cooldown: 60)
        ])
        var monitor = SOSMonitor(policy: policy, age: 30)
        #expect(monitor.feed([sample(.heartRate, 120, minutes: 0), sample(.heartRate, 120, minutes: 1)]).isEmpty)
        #expect(monitor.feed([sample(.heartRate, 120, minutes: 2)]).map(\.rule) == ["fever"])
        #expect(monitor.feed([sample(.heartRate, 120, minutes: 3)]).map(\.rule) == ["fever"])
    }
}
