import AutomatedSOS
import Foundation
import Testing

/// The fever rule (BodyTemperatureBounds) and the two oxygen saturation rules (OxygenSaturationBounds).
@Suite struct FeverAndOxygenRuleTests {
    // MARK: fever

    @Test func twoReadingsAbove40WithinHalfAnHourAlert() {
        var monitor = SOSMonitor(age: 30)
        let alerts = monitor.feed([sample(.bodyTemperature, 40.3, minutes: 0), sample(.bodyTemperature, 40.5, minutes: 25)])
        #expect(alerts.map(\.rule) == ["body_temperature_high"])
        #expect(alerts.first?.threshold == 40)
        #expect(alerts.first?.at == at(minutes: 25))
    }

    @Test func feverBelowOrAtTheBoundOrNotPersistingDoesNotAlert() {
        var atBound = SOSMonitor(age: 30)
        #expect(atBound.feed([sample(.bodyTemperature, 40.0, minutes: 0), sample(.bodyTemperature, 40.0, minutes: 5)]).isEmpty)
        var highFever = SOSMonitor(age: 30)
        #expect(highFever.feed([sample(.bodyTemperature, 39.8, minutes: 0), sample(.bodyTemperature, 39.9, minutes: 5)]).isEmpty)
        var once = SOSMonitor(age: 30)
        #expect(once.feed([sample(.bodyTemperature, 40.4, minutes: 0)]).isEmpty)
        var tooFarApart = SOSMonitor(age: 30)
        #expect(tooFarApart.feed([sample(.bodyTemperature, 40.4, minutes: 0), sample(.bodyTemperature, 40.4, minutes: 31)]).isEmpty)
    }

    @Test func aThermometerGlitchDoesNotAlert() {
        var monitor = SOSMonitor(age: 30)
        // 47 °C is outside what the server accepts (30–45): a fault. One 41 between normal readings: not persistent.
        let alerts = monitor.feed([
            sample(.bodyTemperature, 47, minutes: 0), sample(.bodyTemperature, 47, minutes: 1), sample(.bodyTemperature, 36.8, minutes: 2),
            sample(.bodyTemperature, 41, minutes: 3), sample(.bodyTemperature, 36.9, minutes: 4),
        ])
        #expect(alerts.isEmpty)
    }

    @Test func feverAlertsDuringExercise() {
        // Exertional heat stroke happens during exertion: steps do not hide it.
        var monitor = SOSMonitor(age: 25)
        let steps = (0..<10).map { sample(.stepCount, 150, minutes: Double($0)) }
        #expect(
            monitor.feed(steps + [sample(.bodyTemperature, 41, minutes: 8), sample(.bodyTemperature, 41.2, minutes: 10)]).map(\.rule)
                == ["body_temperature_high"])
    }

    // MARK: oxygen saturation at rest

    @Test func threeLowReadingsAtRestAlert() {
        var monitor = SOSMonitor(age: 60)
        let alerts = monitor.feed([
            sample(.oxygenSaturation, 88, minutes: 0), sample(.oxygenSaturation, 89, minutes: 4), sample(.oxygenSaturation, 87, minutes: 8),
        ])
        #expect(alerts.map(\.rule) == ["oxygen_saturation_low_at_rest"])
        #expect(alerts.first?.at == at(minutes: 8))
        #expect(alerts.first?.threshold == 90)
    }

    @Test func lowAtRestNeedsThreeReadingsWithinTenMinutesBelow90() {
        var two = SOSMonitor(age: 60)
        #expect(two.feed([sample(.oxygenSaturation, 88, minutes: 0), sample(.oxygenSaturation, 88, minutes: 4)]).isEmpty)
        var slow = SOSMonitor(age: 60)
        #expect(
            slow.feed([
                sample(.oxygenSaturation, 88, minutes: 0), sample(.oxygenSaturation, 88, minutes: 6), sample(.oxygenSaturation, 88, minutes: 11),
            ]).isEmpty)
        var atBound = SOSMonitor(age: 60)
        #expect(
            atBound.feed([
                sample(.oxygenSaturation, 90, minutes: 0), sample(.oxygenSaturation, 90, minutes: 1), sample(.oxygenSaturation, 90, minutes: 2),
            ]).isEmpty)
    }

    @Test func lowSaturationDuringActivityIsNotAnAtRestAlert() {
        // A runner at 88 %: moderate exercise-induced hypoxaemia or motion artefact, not an emergency.
        var steps = SOSMonitor(age: 30)
        let walking = (0..<10).map { sample(.stepCount, 150, minutes: Double($0)) }
        #expect(
            steps.feed(
                walking + [
                    sample(.oxygenSaturation, 88, minutes: 7), sample(.oxygenSaturation, 88, minutes: 8), sample(.oxygenSaturation, 88, minutes: 9),
                ]
            ).isEmpty)
        var swimming = SOSMonitor(age: 30)
        swimming.record(SOSWorkout(start: at(minutes: 0), duration: 20 * 60))
        #expect(
            swimming.feed([
                sample(.oxygenSaturation, 87, minutes: 7), sample(.oxygenSaturation, 87, minutes: 8), sample(.oxygenSaturation, 87, minutes: 9),
            ]).isEmpty)
    }

    @Test func severeDesaturationAlertsEvenDuringActivity() {
        var monitor = SOSMonitor(age: 30)
        let walking = (0..<10).map { sample(.stepCount, 150, minutes: Double($0)) }
        #expect(
            monitor.feed(walking + [sample(.oxygenSaturation, 82, minutes: 8), sample(.oxygenSaturation, 81, minutes: 9)]).map(\.rule)
                == ["oxygen_saturation_low"])
    }

    @Test func anOximeterGlitchDoesNotAlert() {
        var monitor = SOSMonitor(age: 60)
        // 40 % is below what a sensor can report (50–100): a fault. One 70 amid normal readings: an artefact.
        let alerts = monitor.feed([
            sample(.oxygenSaturation, 40, minutes: 0), sample(.oxygenSaturation, 40, minutes: 1), sample(.oxygenSaturation, 40, minutes: 2),
            sample(.oxygenSaturation, 97, minutes: 3), sample(.oxygenSaturation, 70, minutes: 4), sample(.oxygenSaturation, 96, minutes: 5),
            sample(.oxygenSaturation, 88, minutes: 6), sample(.oxygenSaturation, 97, minutes: 7), sample(.oxygenSaturation, 88, minutes: 8),
        ])
        #expect(alerts.isEmpty)
    }
}
