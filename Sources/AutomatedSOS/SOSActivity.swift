import Foundation

/// When the person counts as active, so that rules with `suppressedWhileActive` stay quiet: a fast heart on
/// a run, a bike or in a pool is normal. Any one of these makes the person active at the time of a reading:
/// - more than `stepThreshold` steps in the `window` seconds before it;
/// - more than `activeEnergyPerMinute` kcal of active energy per minute on average over the same window
///   (cycling and swimming count no steps, but burn energy);
/// - a workout of any kind (`SOSWorkout`) that it falls in, or in the `workoutRecovery` seconds after its end.
public struct SOSActivity: Sendable, Hashable, Codable {
    /// Steps.
    public var stepThreshold: Double
    /// Seconds.
    public var window: TimeInterval
    /// kcal per minute of active energy (energy above the resting rate, as HealthKit's active energy is).
    public var activeEnergyPerMinute: Double
    /// Seconds after a workout's end during which the person still counts as active.
    public var workoutRecovery: TimeInterval

    public init(
        stepThreshold: Double, window: TimeInterval, activeEnergyPerMinute: Double = Self.defaultActiveEnergyPerMinute,
        workoutRecovery: TimeInterval = Self.defaultWorkoutRecovery
    ) {
        self.stepThreshold = stepThreshold
        self.window = window
        self.activeEnergyPerMinute = activeEnergyPerMinute
        self.workoutRecovery = workoutRecovery
    }

    /// More than 200 steps in 10 minutes (about two minutes of walking, well above shuffling around a room),
    /// more than 3 kcal/min of active energy over them, or a workout and the 10 minutes after it.
    public static let `default` = SOSActivity(stepThreshold: 200, window: 10 * 60)

    /// 3 kcal/min of active energy: moderate activity for most adults.
    ///
    /// The Compendium of Physical Activities (Ainsworth B.E. et al., "2011 Compendium of Physical Activities:
    /// a second update of codes and MET values", Med Sci Sports Exerc 43 (2011) 1575–1581) rates activities
    /// in METs, 1 MET ≈ 1 kcal per kg per hour, and calls 3.0–5.9 METs moderate. Active energy is the part
    /// above rest, (MET − 1) × kg / 60 kcal/min: for 70 kg, 3 kcal/min is about 3.6 METs — walking at
    /// 3 mph (3.5) to leisure cycling under 10 mph (4.0); leisure swimming (6.0) burns 5.8. Sitting quietly
    /// (1.3 METs) is 0.35 kcal/min at 70 kg and 0.6 at 120 kg, far below, so a resting person is never taken
    /// for active (watches estimate energy partly from heart rate; the margin covers a fast heart at rest).
    /// The price: a light person (under ~55 kg) cycling gently may stay under it; steps or a recorded
    /// workout still count for them.
    public static let defaultActiveEnergyPerMinute = 3.0

    /// 10 minutes: as long as steps keep counting after the last of them (`window`). A healthy heart slows by
    /// more than 12 beats/min in the first minute after exercise (Cole C.R. et al., "Heart-rate recovery
    /// immediately after exercise as a predictor of mortality", N Engl J Med 341 (1999) 1351–1357), so ten
    /// minutes after a workout it is far below the maximum the high-heart-rate rule watches for.
    public static let defaultWorkoutRecovery: TimeInterval = 10 * 60
}
