import Foundation

/// The time source of the responder's countdown, injected so tests and replays never wait in real time.
public protocol SOSClock: Sendable {
    var now: Date { get }
    /// Returns at `deadline` (at once if it has passed); throws `CancellationError` if the task is cancelled.
    func sleep(until deadline: Date) async throws
}
