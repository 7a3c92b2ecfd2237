import Foundation
import Logging
import NIOCore

/// The spectators' live feeds: one reader per watched run, whatever the number of spectators.
///
/// - **One read a period.** A run with at least one spectator is read on a steady beat of `period` (a read
///   that takes long does not push the next one back by its own length). Spectators who arrive while the
///   feed's first read is under way wait for that same read: however many connect at once, the run is read
///   once. A run nobody watches is not read at all.
/// - **One buffer for everyone.** A snapshot that changed is encoded once, off the actor, into one
///   `ByteBuffer`; every spectator's stream holds that same buffer and the HTTP edge writes it as it is, so
///   a spectator costs no copy of the document (only the socket's own).
/// - **No one waits for a slow spectator.** Each stream keeps only the newest few events: a spectator who
///   does not keep up skips to the present, and handing an event to a stream never waits.
package actor RunLiveFeeds {
    package typealias Events = AsyncStream<ByteBuffer>

    private let runs: RunService
    private let period: Duration
    private let heartbeat: Duration
    private let logger: Logger
    private var feeds: [UUID: Feed] = [:]
    /// Snapshots read so far, by every feed (for tests and metrics: it grows with the runs watched and the
    /// time, never with the spectators).
    package private(set) var reads = 0

    /// What a spectator's stream keeps of the events it has not read yet.
    static let kept = 4

    /// A snapshot as it was sent: kept to tell whether the next one changed before encoding that.
    struct Published: Sendable {
        var snapshot: RunService.LiveSnapshot
        var event: ByteBuffer
    }

    private struct Feed {
        /// Which feed this is: a reader or a spectator of an ended feed must not touch a newer one.
        let generation = UUID()
        /// The feed's first read, which every spectator arriving before it ends waits for.
        let first: Task<Published, any Error>
        var spectators: [UUID: Events.Continuation] = [:]
        var reader: Task<Void, Never>?
        /// The newest snapshot sent (nil until the first read ended).
        var last: Published?
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
    package func watch(_ runID: UUID) async throws -> (events: Events, stop: @Sendable () -> Void) {
        while true {
            let feed = feeds[runID] ?? start(runID)
            let published: Published
            if let last = feed.last {
                published = last
            } else {
                do {
                    published = try await feed.first.value
                } catch {
                    // The next spectator tries again with a read of their own.
                    if feeds[runID]?.generation == feed.generation { feeds[runID] = nil }
                    throw error
                }
            }
            let (events, continuation) = Events.makeStream(bufferingPolicy: .bufferingNewest(Self.kept))
            let stop: @Sendable () -> Void = { continuation.finish() }
            continuation.yield(published.event)
            guard published.snapshot.state == .upcoming || published.snapshot.state == .live else {
                // Over: nothing will change, so there is nothing to follow (and no feed to keep).
                if feeds[runID]?.generation == feed.generation, feeds[runID]?.spectators.isEmpty == true { feeds[runID] = nil }
                continuation.finish()
                return (events, stop)
            }
            // The feed may have ended while this spectator waited for its first read (the run ended, or the
            // spectators who joined meanwhile all left): join the next one.
            guard feeds[runID]?.generation == feed.generation else { continue }
            let spectator = UUID()
            continuation.onTermination = { [weak self] _ in
                Task { await self?.leave(runID, spectator, generation: feed.generation) }
            }
            feeds[runID]?.spectators[spectator] = continuation
            if feeds[runID]?.last == nil { feeds[runID]?.last = published }
            if feeds[runID]?.reader == nil {
                feeds[runID]?.reader = Task { await self.read(runID, generation: feed.generation) }
            }
            return (events, stop)
        }
    }

    /// How many runs are being read, and how many spectators watch them (for tests and metrics).
    package var counts: (runs: Int, spectators: Int) { (feeds.count, feeds.values.reduce(0) { $0 + $1.spectators.count }) }

    /// A feed for `runID` whose first read has begun.
    private func start(_ runID: UUID) -> Feed {
        reads += 1
        let feed = Feed(first: Task { try await self.publish(runID) })
        feeds[runID] = feed
        return feed
    }

    private func leave(_ runID: UUID, _ spectator: UUID, generation: UUID) {
        guard feeds[runID]?.generation == generation else { return }
        feeds[runID]?.spectators[spectator] = nil
        if feeds[runID]?.spectators.isEmpty == true {
            feeds[runID]?.reader?.cancel()
            feeds[runID] = nil
        }
    }

    /// Reads the run once a period while anyone watches; a failed read is retried on the next one, and a run
    /// that no longer exists (its organiser's account was erased) ends the feed.
    private func read(_ runID: UUID, generation: UUID) async {
        let clock = ContinuousClock()
        var due = clock.now
        var lastSent = clock.now
        while !Task.isCancelled {
            // On the beat; a read that took longer than a period is followed by the next at once.
            due = max(due + period, clock.now)
            try? await Task.sleep(until: due, clock: clock)
            guard !Task.isCancelled, let feed = feeds[runID], feed.generation == generation else { return }
            reads += 1
            do {
                // A feed's reader starts once its first snapshot was sent, so there is always one to compare with.
                guard let previous = feed.last?.snapshot else { return }
                let published = try await publish(runID, unless: previous)
                guard feeds[runID]?.generation == generation else { return }
                if let published {
                    feeds[runID]?.last = published
                    send(published.event, to: runID)
                    lastSent = clock.now
                } else if clock.now - lastSent >= heartbeat {
                    // A comment: keeps proxies and the server's idle timeout from closing a quiet stream.
                    send(Self.stillWatching, to: runID)
                    lastSent = clock.now
                }
                // (An unchanged snapshot is one of a run still under way: the one before it did not end the feed.)
                if let state = published?.snapshot.state, state == .finished || state == .cancelled { end(runID) }
            } catch RunError.notFound {
                end(runID)
            } catch {
                // The last spectator left while the run was read: the read was cancelled with the reader, as meant.
                guard !Task.isCancelled, !(error is CancellationError) else { return }
                logger.warning("a run's live feed could not be read", metadata: ["run.id": "\(runID)", "error": "\(error)"])
            }
        }
    }

    /// The run's snapshot and its event, encoded off the actor (joining and leaving spectators do not wait for
    /// it); nil when the snapshot is `previous`, which then needs no encoding.
    private nonisolated func publish(_ runID: UUID, unless previous: RunService.LiveSnapshot) async throws -> Published? {
        let snapshot = try await runs.live(id: runID, logger: logger)
        guard snapshot != previous else { return nil }
        return Published(snapshot: snapshot, event: Self.event(snapshot))
    }

    /// The run's snapshot and its event, encoded off the actor.
    private nonisolated func publish(_ runID: UUID) async throws -> Published {
        let snapshot = try await runs.live(id: runID, logger: logger)
        return Published(snapshot: snapshot, event: Self.event(snapshot))
    }

    private func send(_ event: ByteBuffer, to runID: UUID) {
        for continuation in feeds[runID]?.spectators.values ?? [:].values { continuation.yield(event) }
    }

    private func end(_ runID: UUID) {
        let spectators = feeds[runID]?.spectators.values.map { $0 } ?? []
        feeds[runID]?.reader?.cancel()
        feeds[runID] = nil
        for continuation in spectators { continuation.finish() }
    }

    static let stillWatching = ByteBuffer(string: ": still watching\n\n")

    /// `event: positions` with the snapshot's JSON (`RunLiveJSON`) as its data, in one buffer.
    static func event(_ snapshot: RunService.LiveSnapshot) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: 128 + 160 * snapshot.runners.count)
        buffer.writeString("event: positions\ndata: ")
        RunLiveJSON.write(snapshot, into: &buffer)
        buffer.writeString("\n\n")
        return buffer
    }
}
