import AutomatedSOS
import Foundation
import Testing

/// Persistence, cooldown, activity, order, duplicates and faults.
@Suite struct MonitorBehaviourTests {
    @Test func oneCriticalReadingNeverAlerts() {
        var monitor = SOSMonitor(age: 45)
        #expect(monitor.feed([sample(.heartRate, 30, minutes: 0), sample(.heartRate, 70, minutes: 1)]).isEmpty)
    }

    @Test func theSecondReadingMustComeWithinFiveMinutes() {
        var late = SOSMonitor(age: 45)
        #expect(late.feed([sample(.heartRate, 30, minutes: 0), sample(.heartRate, 30, minutes: 5.01)]).isEmpty)
        var inTime = SOSMonitor(age: 45)
        #expect(inTime.feed([sample(.heartRate, 30, minutes: 0), sample(.heartRate, 30, minutes: 5)]).count == 1)
    }

    @Test func aNormalReadingInBetweenBreaksTheRun() {
        var monitor = SOSMonitor(age: 45)
        let alerts = monitor.feed([
            sample(.heartRate, 30, minutes: 0), sample(.heartRate, 70, minutes: 1), sample(.heartRate, 30, minutes: 2),
        ])
        #expect(alerts.isEmpty)
    }

    @Test func aRuleAlertsOncePerCooldownAndAgainAfterIt() {
        var monitor = SOSMonitor(age: 45)
        var alerts: [SOSAlert] = []
        for minute in stride(from: 0.0, through: 20, by: 1) { alerts += monitor.ingest(sample(.oxygenSaturation, 80, minutes: minute)) }
        alerts.removeAll { $0.rule != "oxygen_saturation_low" }
        // Alerts at minute 1 (second reading), then not until the 15-minute cooldown has passed: minute 16.
        #expect(alerts.map(\.at) == [at(minutes: 1), at(minutes: 16)])
    }

    @Test func differentConditionsDoNotShareACooldown() {
        var monitor = SOSMonitor(age: 45)
        let alerts = monitor.feed([
            sample(.systolicPressure, 150, minutes: 0), sample(.systolicPressure, 150, minutes: 1),
            sample(.diastolicPressure, 95, minutes: 1), sample(.diastolicPressure, 95, minutes: 2),
        ])
        #expect(alerts.map(\.rule) == ["hypertension_systolic", "hypertension_diastolic"])
    }

    @Test func aHighHeartRateIsIgnoredWhileActive() {
        var monitor = SOSMonitor(age: 45)
        var samples = (0..<10).map { sample(.stepCount, 120, minutes: Double($0)) }
        samples += [sample(.heartRate, 180, minutes: 9.5), sample(.heartRate, 182, minutes: 10)]
        #expect(monitor.feed(samples).isEmpty)
    }

    @Test func stepsOlderThanTenMinutesDoNotSuppress() {
        var monitor = SOSMonitor(age: 45)
        let samples = [sample(.stepCount, 2000, minutes: 0), sample(.heartRate, 180, minutes: 12), sample(.heartRate, 182, minutes: 13)]
        #expect(monitor.feed(samples).map(\.rule) == ["heart_rate_high"])
    }

    @Test func aFewStepsDoNotSuppress() {
        var monitor = SOSMonitor(age: 45)
        let samples = [sample(.stepCount, 150, minutes: 5), sample(.heartRate, 180, minutes: 9), sample(.heartRate, 182, minutes: 10)]
        #expect(monitor.feed(samples).map(\.rule) == ["heart_rate_high"])
    }

    @Test func activityNeverHidesALowHeartRate() {
        var monitor = SOSMonitor(age: 45)
        let samples = [sample(.stepCount, 3000, minutes: 5), sample(.heartRate, 30, minutes: 9), sample(.heartRate, 30, minutes: 10)]
        #expect(monitor.feed(samples).map(\.rule) == ["heart_rate_low"])
    }

    @Test func aLateReadingThatCompletesARunAlertsOnce() {
        var monitor = SOSMonitor(age: 45)
        let alerts = monitor.feed([
            sample(.heartRate, 30, minutes: 4), sample(.heartRate, 70, minutes: 0), sample(.heartRate, 30, minutes: 3),
        ])
        #expect(alerts.map(\.at) == [at(minutes: 3)])
    }

    @Test func staleReadingsRaiseNothing() {
        var monitor = SOSMonitor(age: 45)
        #expect(monitor.feed([sample(.heartRate, 70, minutes: 60)]).isEmpty)
        // A critical pair from an hour ago, delivered now, is history, not an emergency.
        #expect(monitor.feed([sample(.heartRate, 30, minutes: 0), sample(.heartRate, 30, minutes: 1)]).isEmpty)
    }

    @Test func aDuplicateIsNotASecondReading() {
        var monitor = SOSMonitor(age: 45)
        let reading = sample(.heartRate, 30, minutes: 0)
        #expect(monitor.feed([reading, reading, reading]).isEmpty)
    }

    @Test func aDuplicateOfAnAlertingReadingDoesNotAlertAgain() {
        var monitor = SOSMonitor(age: 45)
        let pair = [sample(.heartRate, 30, minutes: 0), sample(.heartRate, 30, minutes: 1)]
        #expect(monitor.feed(pair).count == 1)
        #expect(monitor.feed(pair).isEmpty)
    }

    @Test func impossibleReadingsAreIgnored() {
        var monitor = SOSMonitor(age: 45)
        let alerts = monitor.feed([
            sample(.heartRate, 0, minutes: 0), sample(.heartRate, 0, minutes: 1), sample(.heartRate, .nan, minutes: 2),
            sample(.systolicPressure, 400, minutes: 0), sample(.systolicPressure, 400, minutes: 1),
        ])
        #expect(alerts.isEmpty)
    }

    @Test func manyReadingsKeepTheHistoryBoundedAndCorrect() {
        var monitor = SOSMonitor(age: 45)
        var alerts: [SOSAlert] = []
        // A day of normal readings every 10 s, then a collapse: the monitor must still see the pair.
        for i in 0..<8640 { alerts += monitor.ingest(SOSSample(type: .heartRate, value: 65, at: t0.addingTimeInterval(Double(i) * 10))) }
        alerts += monitor.ingest(SOSSample(type: .heartRate, value: 30, at: t0.addingTimeInterval(86_400)))
        alerts += monitor.ingest(SOSSample(type: .heartRate, value: 30, at: t0.addingTimeInterval(86_410)))
        #expect(alerts.map(\.rule) == ["heart_rate_low"])
    }
}
