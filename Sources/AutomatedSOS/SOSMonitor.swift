import Foundation

/// Evaluates a policy for one person, one sample at a time, on the device, with no network.
///
/// Samples may arrive in any order (a watch syncs late, a batch is replayed after a crash). The monitor
/// keeps, per type, the last few readings in time order and decides on the run of critical readings around
/// each new one, so a late reading that completes a run still alerts, while:
/// - a reading older than the newest of its type by more than the rule's persistence window is stale and
///   ignored (it says nothing about the person now);
/// - a reading with the same type and time as one already seen is a duplicate and ignored (the server
///   treats `(type, at)` the same way);
/// - a reading outside the range a working sensor can produce is a fault and ignored.
///
/// The hot path allocates nothing: all state lives in arrays sized when the monitor is made. The price: a
/// type's history holds its last few readings only (at least 8, twice the longest run a rule needs), so a
/// late reading older than all of them is dropped even inside the window — safe (no stale alert), but with a
/// sensor reporting every second, a late critical reading more than a few seconds old cannot complete a run.
public struct SOSMonitor: Sendable {
    public let policy: SOSPolicy
    public let age: Int

    /// A rule with its threshold resolved for `age` and its times as plain seconds.
    private struct CompiledRule: Sendable {
        var id: String
        var type: SOSSampleType
        var comparison: SOSComparison
        var threshold: Double
        var readings: Int
        var window: Double
        var cooldown: Double
        var suppressedWhileActive: Bool
        var lastAlertAt: Double = -.infinity
    }

    private var rules: ContiguousArray<CompiledRule>
    /// Rule indices grouped by type: the rules of type `t` are `ruleOrder[ruleStart[t]..<ruleStart[t + 1]]`.
    private let ruleOrder: ContiguousArray<Int>
    private let ruleStart: ContiguousArray<Int>

    /// Per type, the last `capacity` readings in time order: slot `type * capacity + i`.
    private let capacity: Int
    private var times: ContiguousArray<Double>
    private var values: ContiguousArray<Double>
    private var counts: ContiguousArray<Int>
    private var newest: ContiguousArray<Double>
    /// Per type, how far behind the newest reading a late one is still considered.
    private let staleAfter: ContiguousArray<Double>

    /// Steps and active energy per minute, each in a ring of minute buckets covering the activity window.
    private var steps: MinuteTotals
    private var energy: MinuteTotals
    private let activityMinutes: Int64
    private let stepThreshold: Double
    private let energyThreshold: Double
    /// The last few workouts (start, end + recovery) as seconds; a fixed number of slots, oldest replaced.
    private var workoutStarts: ContiguousArray<Double>
    private var workoutEnds: ContiguousArray<Double>
    private let workoutRecovery: Double

    public init(policy: SOSPolicy = .default, age: Int) {
        self.policy = policy
        self.age = age
        var compiled = ContiguousArray<CompiledRule>()
        for rule in policy.rules {
            compiled.append(
                CompiledRule(
                    id: rule.id, type: rule.type, comparison: rule.comparison, threshold: rule.threshold.value(age: age),
                    readings: max(1, rule.persistence.readings), window: max(0, rule.persistence.within),
                    cooldown: max(0, rule.cooldown), suppressedWhileActive: rule.suppressedWhileActive))
        }
        rules = compiled
        var order = ContiguousArray<Int>()
        var start = ContiguousArray<Int>()
        var stale = ContiguousArray<Double>(repeating: SOSPersistence.default.within, count: SOSSampleType.count)
        for type in SOSSampleType.allCases {
            start.append(order.count)
            let ofType = compiled.indices.filter { compiled[$0].type == type }
            order.append(contentsOf: ofType)
            if let widest = ofType.map({ compiled[$0].window }).max() { stale[type.index] = widest }
        }
        start.append(order.count)
        ruleOrder = order
        ruleStart = start
        staleAfter = stale
        // Twice the longest run a rule needs, so a run and the readings around it fit; at least 8.
        capacity = max(8, 2 * (compiled.map(\.readings).max() ?? 1))
        times = ContiguousArray(repeating: 0, count: SOSSampleType.count * capacity)
        values = ContiguousArray(repeating: 0, count: SOSSampleType.count * capacity)
        counts = ContiguousArray(repeating: 0, count: SOSSampleType.count)
        newest = ContiguousArray(repeating: -.infinity, count: SOSSampleType.count)
        let activity = policy.activity
        activityMinutes = Int64(max(1, (activity.window / 60).rounded(.up)))
        stepThreshold = activity.stepThreshold
        // A rate over the whole window, as a total: more than `rate × minutes` kcal in the window.
        energyThreshold = activity.activeEnergyPerMinute * Double(activityMinutes)
        steps = MinuteTotals(minutes: Int(activityMinutes) + 2)
        energy = MinuteTotals(minutes: Int(activityMinutes) + 2)
        workoutStarts = ContiguousArray(repeating: .infinity, count: 4)
        workoutEnds = ContiguousArray(repeating: -.infinity, count: 4)
        workoutRecovery = max(0, activity.workoutRecovery)
    }

    /// Takes one sample and returns the alerts it completes (usually none). Allocates only when it alerts.
    public mutating func ingest(_ sample: SOSSample) -> [SOSAlert] {
        var alerts: [SOSAlert] = []
        ingest(sample) { alerts.append($0) }
        return alerts
    }

    /// Takes one sample and calls `onAlert` for each alert it completes; allocates nothing when it does not alert.
    public mutating func ingest(_ sample: SOSSample, onAlert: (SOSAlert) -> Void) {
        let value = sample.value
        guard value.isFinite, sample.type.plausibleRange.contains(value) else { return }
        let t = sample.at.timeIntervalSinceReferenceDate
        let type = sample.type.index
        if sample.type == .stepCount { steps.add(value, at: t) }
        if sample.type == .activeEnergyBurned { energy.add(value, at: t) }

        // Stale: too far behind what this type has already reported.
        if t < newest[type] - staleAfter[type] { return }
        guard let position = insert(type: type, time: t, value: value) else { return }
        if t > newest[type] { newest[type] = t }

        for slot in ruleStart[type]..<ruleStart[type + 1] {
            let index = ruleOrder[slot]
            if let alert = evaluate(rule: index, type: type, position: position, sample: sample) { onAlert(alert) }
        }
    }

    /// Puts a reading into its type's time-ordered history; nil if it is a duplicate or too old to place.
    private mutating func insert(type: Int, time t: Double, value: Double) -> Int? {
        let base = type * capacity
        var count = counts[type]
        // From the newest backwards: in-order samples stop at the first comparison.
        var position = count
        while position > 0, times[base + position - 1] > t { position -= 1 }
        if position > 0, times[base + position - 1] == t { return nil }
        if count == capacity {
            // Full: drop the oldest reading, unless the new one would be older still.
            if position == 0 { return nil }
            for i in 0..<(position - 1) {
                times[base + i] = times[base + i + 1]
                values[base + i] = values[base + i + 1]
            }
            position -= 1
        } else {
            var i = count
            while i > position {
                times[base + i] = times[base + i - 1]
                values[base + i] = values[base + i - 1]
                i -= 1
            }
            count += 1
            counts[type] = count
        }
        times[base + position] = t
        values[base + position] = value
        return position
    }

    /// Whether the reading at `position` completes a persisting run of critical readings for the rule.
    private mutating func evaluate(rule index: Int, type: Int, position: Int, sample: SOSSample) -> SOSAlert? {
        let rule = rules[index]
        let base = type * capacity
        let count = counts[type]
        guard rule.comparison.isCritical(values[base + position], threshold: rule.threshold) else { return nil }
        // The run of critical readings that contains the new one.
        var low = position
        while low > 0, rule.comparison.isCritical(values[base + low - 1], threshold: rule.threshold) { low -= 1 }
        var high = position
        while high + 1 < count, rule.comparison.isCritical(values[base + high + 1], threshold: rule.threshold) { high += 1 }
        guard high - low + 1 >= rule.readings else { return nil }
        // Some `readings` consecutive ones that include the new reading must lie within the window.
        var persists = false
        var first = max(low, position - rule.readings + 1)
        while first <= position, first + rule.readings - 1 <= high {
            if times[base + first + rule.readings - 1] - times[base + first] <= rule.window {
                persists = true
                break
            }
            first += 1
        }
        guard persists else { return nil }
        let t = times[base + position]
        if abs(t - rule.lastAlertAt) < rule.cooldown { return nil }
        if rule.suppressedWhileActive, isActive(at: t) { return nil }
        rules[index].lastAlertAt = t
        return SOSAlert(
            rule: rule.id, type: sample.type, comparison: rule.comparison, threshold: rule.threshold,
            value: sample.value, at: sample.at)
    }

    /// Takes a workout: rules suppressed while active stay quiet from its start to the end of its recovery.
    /// A workout with the start of one already known extends it (an app sends a workout in progress again as
    /// it goes on). An implausible duration (none, or over a day) is a recording error and ignored.
    public mutating func record(_ workout: SOSWorkout) {
        guard workout.duration.isFinite, SOSWorkout.plausibleDuration.contains(workout.duration) else { return }
        let start = workout.start.timeIntervalSinceReferenceDate
        let end = start + workout.duration + workoutRecovery
        var slot = 0
        if let same = workoutStarts.firstIndex(of: start) {
            slot = same
            workoutEnds[slot] = max(workoutEnds[slot], end)
            return
        }
        // Replace the workout that ended first (an empty slot ends at -infinity).
        for i in workoutEnds.indices where workoutEnds[i] < workoutEnds[slot] { slot = i }
        guard end > workoutEnds[slot] else { return }
        workoutStarts[slot] = start
        workoutEnds[slot] = end
    }

    /// Whether the person counts as active at `t`: steps or active energy in the window before it above the
    /// policy's thresholds, or inside a workout or its recovery.
    private func isActive(at t: Double) -> Bool {
        if steps.total(endingAt: t, minutes: activityMinutes) > stepThreshold { return true }
        if energy.total(endingAt: t, minutes: activityMinutes) > energyThreshold { return true }
        for i in workoutStarts.indices where workoutStarts[i] <= t && t <= workoutEnds[i] { return true }
        return false
    }
}

/// Totals per minute in a ring of buckets: constant memory, no allocation after creation.
private struct MinuteTotals: Sendable {
    private var stamps: ContiguousArray<Int64>
    private var totals: ContiguousArray<Double>

    init(minutes: Int) {
        stamps = ContiguousArray(repeating: .min, count: minutes)
        totals = ContiguousArray(repeating: 0, count: minutes)
    }

    mutating func add(_ value: Double, at t: Double) {
        let minute = Int64((t / 60).rounded(.down))
        let count = Int64(stamps.count)
        let bucket = Int(((minute % count) + count) % count)
        if stamps[bucket] == minute {
            totals[bucket] += value
        } else if stamps[bucket] < minute {
            stamps[bucket] = minute
            totals[bucket] = value
        }
        // Else the bucket already holds a later minute: the value is too old to matter for activity.
    }

    /// The total of the `minutes` whole minutes before `t` and the minute of `t`.
    func total(endingAt t: Double, minutes: Int64) -> Double {
        let minute = Int64((t / 60).rounded(.down))
        var total = 0.0
        for bucket in stamps.indices {
            let stamp = stamps[bucket]
            if stamp <= minute, stamp >= minute - minutes { total += totals[bucket] }
        }
        return total
    }
}
