import AutomatedSOS
import Foundation
import Synchronization

/// A fixed origin for test times, so failures print readable dates.
let t0 = Date(timeIntervalSince1970: 1_795_000_000)

func at(minutes: Double) -> Date { t0.addingTimeInterval(minutes * 60) }

func sample(_ type: SOSSampleType, _ value: Double, minutes: Double) -> SOSSample {
    SOSSample(type: type, value: value, at: at(minutes: minutes))
}

extension SOSMonitor {
    /// Feeds every sample and returns all alerts, in order.
    mutating func feed(_ samples: [SOSSample]) -> [SOSAlert] { samples.flatMap { ingest($0) } }
}

/// A clock that moves only when the test says so; sleepers wake as soon as it reaches their deadline.
final class ManualClock: SOSClock {
    private struct State {
        var now: Date
        var nextID = 0
        var sleepers: [Int: (deadline: Date, continuation: CheckedContinuation<Void, any Error>)] = [:]
    }

    private let state: Mutex<State>

    init(now: Date = t0) { state = Mutex(State(now: now)) }

    var now: Date { state.withLock { $0.now } }

    func sleep(until deadline: Date) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Next { case wait, resume, cancel }
                let next: Next = state.withLock { state in
                    if Task.isCancelled { return .cancel }
                    if state.now >= deadline { return .resume }
                    state.sleepers[id] = (deadline, continuation)
                    return .wait
                }
                switch next {
                case .wait: break
                case .resume: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    func advance(by seconds: TimeInterval) {
        let due = state.withLock { state in
            state.now = state.now.addingTimeInterval(seconds)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return due.values.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }
}

/// Records calls instead of placing them; can be told to fail.
final class RecordingDialer: SOSDialer {
    struct Failure: Error {}
    private let calls = Mutex<[SOSAlert]>([])
    private let fails: Bool

    init(fails: Bool = false) { self.fails = fails }

    var placed: [SOSAlert] { calls.withLock { $0 } }

    func dial(for alert: SOSAlert) async throws {
        if fails { throw Failure() }
        calls.withLock { $0.append(alert) }
    }
}

/// Answers when `clock` reaches `answerAt` (nil: at once), or never when `answer` is nil.
struct ScriptedPrompter: SOSPrompter {
    var answer: SOSAnswer?
    var answerAt: Date?
    var clock: ManualClock

    func ask(_ alert: SOSAlert, deadline: Date) async throws -> SOSAnswer {
        if let answerAt, answer != nil { try await clock.sleep(until: answerAt) }
        guard let answer else {
            try await clock.sleep(until: .distantFuture)
            throw CancellationError()
        }
        return answer
    }
}

/// Thread-safe list of what the responder recorded.
final class ActionLog: Sendable {
    private let entries = Mutex<[(SOSResponderAction, Date)]>([])
    func append(_ action: SOSResponderAction, _ at: Date) { entries.withLock { $0.append((action, at)) } }
    var names: [String] { entries.withLock { $0.map(\.0.name) } }
    var all: [(SOSResponderAction, Date)] { entries.withLock { $0 } }
}

struct Permissions: SOSPermissions {
    var hasUserAccount: Bool
    var canPlaceEmergencyCalls: Bool
}

func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("sos-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
