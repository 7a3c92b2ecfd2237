import Foundation
import Logging

/// The spectators' live feeds: one reader per watched run, whatever the number of spectators. Each run
/// with at least one spectator is read once a `period`; the snapshot is encoded once and handed to every
/// spectator's stream, which keeps only the newest (a slow spectator skips to the present, and never makes
/// the others wait). A run nobody watches is not read at all.
package actor RunLiveFeeds {
    private let runs: RunService
    private let period: Duration
    private let heartbeat: Duration
    private let logger: Logger
    private var feeds: [UUID: Feed] = [:]

    private struct Feed {
        var spectators: [UUID: AsyncStream<[UInt8]>.Continuation] = [:]
        var reader: Task<Void, Never>?
        /// Which reader is this feed's: one cancelled while it awaited a read must not touch a newer feed.
        var generation = UUID()
        var last: [UInt8]?
    }

    package init(runs: RunService, period: Duration = .seconds(1), heartbeat: Duration = .seconds(15), logger: Logger) {
        self.runs = runs
        self.period = period
        self.heartbeat = heartbeat
        self.logger = logger
    }

    /// A stream of server-sent events for one spectator: the current snapshot first, then each change; it
    /// ends when the run is over, or when `stop` is called (the server is shutting down). Throws
    /// `RunError.notFound` for an unknown run. A run already watched costs its new spectators no read.
    package func watch(_ runID: UUID) async throws -> (events: AsyncStream<[UInt8]>, stop: @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(4))
        let spectator = UUID()
        continuation.onTermination = { [weak self] _ in
            Task { await self?.leave(runID, spectator) }
        }
        let stop: @Sendable () -> Void = { continuation.finish() }
        if let last = feeds[runID]?.last {
            continuation.yield(last)
            feeds[runID]?.spectators[spectator] = continuation
            return (stream, stop)
        }
        let first = try await runs.live(id: runID, logger: logger)
        let event = Self.event(first)
        continuation.yield(event)
        guard first.state == .upcoming || first.state == .live else {
            continuation.finish()
            return (stream, stop)
        }
        // Another spectator may have started the feed while this one read: join it.
        feeds[runID, default: Feed()].spectators[spectator] = continuation
        if feeds[runID]?.last == nil { feeds[runID]?.last = event }
        if feeds[runID]?.reader == nil {
            let generation = UUID()
            feeds[runID]?.generation = generation
            feeds[runID]?.reader = Task { await self.read(runID, generation: generation) }
        }
        return (stream, stop)
    }

    /// How many runs are being read, and how many spectators watch them (for tests and metrics).
    package var counts: (runs: Int, spectators: Int) { (feeds.count, feeds.values.reduce(0) { $0 + $1.spectators.count }) }

    private func leave(_ runID: UUID, _ spectator: UUID) {
        feeds[runID]?.spectators[spectator] = nil
        if feeds[runID]?.spectators.isEmpty == true {
            feeds[runID]?.reader?.cancel()
            feeds[runID] = nil
        }
    }

    /// Reads the run once a period while anyone watches; a failed read is retried on the next one, and a run
    /// that no longer exists (its organiser's account was erased) ends the feed.
    private func read(_ runID: UUID, generation: UUID) async {
        var sinceEvent = Duration.zero
        while !Task.isCancelled {
            try? await Task.sleep(for: period)
            guard !Task.isCancelled, feeds[runID]?.generation == generation else { return }
            sinceEvent += period
            do {
                let snapshot = try await runs.live(id: runID, logger: logger)
                guard feeds[runID]?.generation == generation else { return }
                let event = Self.event(snapshot)
                if event != feeds[runID]?.last {
                    feeds[runID]?.last = event
                    send(event, to: runID)
                    sinceEvent = .zero
                } else if sinceEvent >= heartbeat {
                    // A comment: keeps proxies and the server's idle timeout from closing a quiet stream.
                    send(Array(": still watching\n\n".utf8), to: runID)
                    sinceEvent = .zero
                }
                if snapshot.state == .finished || snapshot.state == .cancelled { end(runID) }
            } catch RunError.notFound {
                end(runID)
            } catch {
                logger.warning("a run's live feed could not be read", metadata: ["run.id": "\(runID)", "error": "\(error)"])
            }
        }
    }

    private func send(_ bytes: [UInt8], to runID: UUID) {
        for continuation in feeds[runID]?.spectators.values ?? [:].values { continuation.yield(bytes) }
    }

    private func end(_ runID: UUID) {
        let spectators = feeds[runID]?.spectators.values.map { $0 } ?? []
        feeds[runID]?.reader?.cancel()
        feeds[runID] = nil
        for continuation in spectators { continuation.finish() }
    }

    /// `event: positions` with the snapshot's JSON (`RunLiveJSON`) as its data.
    static func event(_ snapshot: RunService.LiveSnapshot) -> [UInt8] {
        Array("event: positions\ndata: ".utf8) + RunLiveJSON.encode(snapshot) + Array("\n\n".utf8)
    }
}
