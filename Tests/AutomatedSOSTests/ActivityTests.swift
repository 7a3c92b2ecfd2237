import AutomatedSOS
import Foundation
import Testing

/// Activity from steps, from active energy and from workouts of any kind (SOSActivity).
@Suite struct ActivityTests {
    /// Two heart rates above a 45-year-old's bound of 175, at minutes 9.5 and 10.
    let fastHeart = [sample(.heartRate, 180, minutes: 9.5), sample(.heartRate, 182, minutes: 10)]

    @Test func activeEnergyAboveTheRateMarksActivity() {
        var monitor = SOSMonitor(age: 45)
        // 8 kcal a minute for ten minutes: cycling, no steps.
        let energy = (0..<10).map { sample(.activeEnergyBurned, 8, minutes: Double($0)) }
        #expect(monitor.feed(energy + fastHeart).isEmpty)
    }

    @Test func activeEnergyAtRestLevelsDoesNotMarkActivity() {
        var monitor = SOSMonitor(age: 45)
        // 1 kcal a minute: a heavy person fidgeting in a chair, well under 3 kcal/min.
        let energy = (0..<10).map { sample(.activeEnergyBurned, 1, minutes: Double($0)) }
        #expect(monitor.feed(energy + fastHeart).map(\.rule) == ["heart_rate_high"])
    }

    @Test func theEnergyRateIsTheWindowsTotal() {
        // Exactly 3 kcal/min over the 10-minute window (plus the current minute): 30 kcal is not more than 30.
        var atTheRate = SOSMonitor(age: 45)
        #expect(atTheRate.feed([sample(.activeEnergyBurned, 30, minutes: 5)] + fastHeart).map(\.rule) == ["heart_rate_high"])
        var above = SOSMonitor(age: 45)
        #expect(above.feed([sample(.activeEnergyBurned, 31, minutes: 5)] + fastHeart).isEmpty)
    }

    @Test func energyOlderThanTheWindowDoesNotSuppress() {
        var monitor = SOSMonitor(age: 45)
        let samples = [sample(.activeEnergyBurned, 500, minutes: 0), sample(.heartRate, 180, minutes: 12), sample(.heartRate, 182, minutes: 13)]
        #expect(monitor.feed(samples).map(\.rule) == ["heart_rate_high"])
    }

    @Test func aWorkoutOfAnyKindSuppressesDuringItAndItsRecovery() {
        var monitor = SOSMonitor(age: 45)
        // A 30-minute swim from minute 0: no steps, no energy.
        monitor.record(SOSWorkout(start: at(minutes: 0), duration: 30 * 60))
        #expect(monitor.feed([sample(.heartRate, 185, minutes: 20), sample(.heartRate, 185, minutes: 21)]).isEmpty)
        // Recovery: up to 10 minutes after the end.
        #expect(monitor.feed([sample(.heartRate, 185, minutes: 38), sample(.heartRate, 185, minutes: 40)]).isEmpty)
        // After the recovery a heart above its maximum is critical again.
        #expect(monitor.feed([sample(.heartRate, 185, minutes: 41), sample(.heartRate, 185, minutes: 42)]).map(\.rule) == ["heart_rate_high"])
    }

    @Test func aWorkoutInProgressIsExtendedBySendingItAgain() {
        var monitor = SOSMonitor(age: 45)
        monitor.record(SOSWorkout(start: at(minutes: 0), duration: 5 * 60))
        monitor.record(SOSWorkout(start: at(minutes: 0), duration: 40 * 60))
        // A shorter resend (an older copy arriving late) does not shorten it.
        monitor.record(SOSWorkout(start: at(minutes: 0), duration: 10 * 60))
        #expect(monitor.feed([sample(.heartRate, 185, minutes: 35), sample(.heartRate, 185, minutes: 36)]).isEmpty)
    }

    @Test func aWorkoutDoesNotSuppressBeforeItStarts() {
        var monitor = SOSMonitor(age: 45)
        monitor.record(SOSWorkout(start: at(minutes: 60), duration: 30 * 60))
        #expect(monitor.feed([sample(.heartRate, 185, minutes: 20), sample(.heartRate, 185, minutes: 21)]).map(\.rule) == ["heart_rate_high"])
    }

    @Test func anImplausibleWorkoutIsIgnored() {
        for duration in [0.0, -60, 2 * 86_400, .nan] {
            var monitor = SOSMonitor(age: 45)
            monitor.record(SOSWorkout(start: at(minutes: 0), duration: duration))
            #expect(monitor.feed([sample(.heartRate, 185, minutes: 1), sample(.heartRate, 185, minutes: 2)]).map(\.rule) == ["heart_rate_high"])
        }
    }

    @Test func activityNeverHidesALowHeartRateOrAFever() {
        var monitor = SOSMonitor(age: 45)
        monitor.record(SOSWorkout(start: at(minutes: 0), duration: 60 * 60))
        let energy = (0..<10).map { sample(.activeEnergyBurned, 10, minutes: Double($0)) }
        let alerts = monitor.feed(
            energy + [
                sample(.heartRate, 30, minutes: 9), sample(.heartRate, 30, minutes: 10),
                sample(.bodyTemperature, 40.6, minutes: 9), sample(.bodyTemperature, 40.8, minutes: 20),
            ])
        #expect(alerts.map(\.rule) == ["heart_rate_low", "body_temperature_high"])
    }

    @Test func thePolicySetsTheEnergyRateAndTheRecovery() {
        var policy = SOSPolicy.default
        policy.activity = SOSActivity(stepThreshold: 200, window: 600, activeEnergyPerMinute: 0.5, workoutRecovery: 0)
        var energy = SOSMonitor(policy: policy, age: 45)
        let light = (0..<10).map { sample(.activeEnergyBurned, 1, minutes: Double($0)) }
        #expect(energy.feed(light + fastHeart).isEmpty)
        var workout = SOSMonitor(policy: policy, age: 45)
        workout.record(SOSWorkout(start: at(minutes: 0), duration: 9 * 60))
        #expect(workout.feed(fastHeart).map(\.rule) == ["heart_rate_high"])
    }
}
