import Foundation
import Synchronization

/// Replays a trace through a monitor and a responder, as on the device but on the trace's own time: the
/// code path behind `d4h sos` and the fixture tests. Nobody answers a replay, so every prompt runs to the
/// end of its countdown (and calls, unless the configuration is prompt-only).
public struct SOSReplay: Sendable {
    public var policy: SOSPolicy
    public var age: Int
    public var responder: SOSResponderConfiguration
    /// Trace seconds per real second; nil replays at once.
    public var speed: Double?

    public init(policy: SOSPolicy = .default, age: Int, responder: SOSResponderConfiguration = .init(), speed: Double? = nil) {
        self.policy = policy
        self.age = age
        self.responder = responder
        self.speed = speed
    }

    /// Feeds `samples` in order and reports every alert and responder action to `emit`; returns the alerts.
    @discardableResult
    public func run(_ samples: [SOSSample], dialer: any SOSDialer, emit: @escaping @Sendable (SOSReplayEvent) -> Void) async -> [SOSAlert] {
        await run(samples.map(SOSTraceEntry.sample), dialer: dialer, emit: emit)
    }

    /// Feeds `entries` (samples and workouts) in order and reports every alert and responder action to `emit`;
    /// returns the alerts.
    @discardableResult
    public func run(_ entries: [SOSTraceEntry], dialer: any SOSDialer, emit: @escaping @Sendable (SOSReplayEvent) -> Void) async -> [SOSAlert] {
        var session = Session(replay: self, dialer: dialer, emit: emit)
        var alerts: [SOSAlert] = []
        for entry in entries { alerts += await session.feed(entry) }
        return alerts
    }

    /// Feeds entries as they arrive (e.g. `SOSTraceEntries` over a file or a pipe), emitting each event as it
    /// happens and keeping nothing: memory stays constant however long the trace. An error of the sequence
    /// (a bad line) ends the replay after everything before it has been processed and emitted, and is
    /// rethrown. Returns the number of alerts.
    @discardableResult
    public func run<Entries: AsyncSequence>(
        streaming entries: Entries, dialer: any SOSDialer, emit: @escaping @Sendable (SOSReplayEvent) -> Void
    ) async throws -> Int where Entries.Element == SOSTraceEntry {
        var session = Session(replay: self, dialer: dialer, emit: emit)
        var count = 0
        for try await entry in entries { count += await session.feed(entry).count }
        return count
    }

    /// The monitor, the clock and the responder of one replay; the clock starts at the first entry's time.
    private struct Session {
        let replay: SOSReplay
        let dialer: any SOSDialer
        let emit: @Sendable (SOSReplayEvent) -> Void
        var monitor: SOSMonitor
        var clock: ReplayClock?
        var responder: SOSResponder?

        init(replay: SOSReplay, dialer: any SOSDialer, emit: @escaping @Sendable (SOSReplayEvent) -> Void) {
            self.replay = replay
            self.dialer = dialer
            self.emit = emit
            monitor = SOSMonitor(policy: replay.policy, age: replay.age)
        }

        mutating func feed(_ entry: SOSTraceEntry) async -> [SOSAlert] {
            let time: Date
            switch entry {
            case .sample(let sample): time = sample.at
            case .workout(let workout): time = workout.start
            }
            if clock == nil {
                let clock = ReplayClock(start: time, speed: replay.speed)
                self.clock = clock
                responder = SOSResponder(configuration: replay.responder, clock: clock, prompter: SilentPrompter(), dialer: dialer)
            }
            try? await clock!.sleep(until: time)
            let alerts: [SOSAlert]
            switch entry {
            case .sample(let sample): alerts = monitor.ingest(sample)
            case .workout(let workout):
                monitor.record(workout)
                alerts = []
            }
            for alert in alerts {
                emit(
                    SOSReplayEvent(
                        event: "alert", rule: alert.rule, type: alert.type, comparison: alert.comparison, value: alert.value,
                        threshold: alert.threshold, at: alert.at))
                let rule = alert.rule
                let emit = self.emit
                _ = await responder!.respond(to: alert) { action, at in
                    var event = SOSReplayEvent(event: action.name, rule: rule, at: at)
                    if case .prompted(let deadline) = action { event.deadline = deadline }
                    if case .dialFailed(let reason) = action { event.detail = reason }
                    emit(event)
                }
            }
            return alerts
        }
    }
}
