import BrokerTestSupport
import Foundation
import NIOCore
import Synchronization
import Testing

@testable import BrokerDomain
@testable import BrokerServer

/// The spectators' feed itself (`RunLiveFeeds`), on the test database with a run made through the API:
/// what many spectators cost the database, and what one stuck spectator costs the others. (The event
/// stream over HTTP is in `RunTests`.)
@Suite("Run live feeds")
struct RunLiveFeedTests {
    /// A live run with two checked-in runners who posted a fix; the runners' tokens.
    private static func liveRun(_ harness: TestHarness) async throws -> (run: UUID, tokens: [String]) {
        let organiser = try await RunFixtures.organiser(harness)
        let run = try await RunFixtures.run(harness, organiser: organiser)
        var tokens: [String] = []
        for name in ["Anna Rossi", "Bruno Gialli"] {
            let runner = try await RunFixtures.runner(harness, fullName: name)
            _ = try await RunFixtures.join(harness, run, token: runner.token)
            try await RunFixtures.checkIn(harness, run, token: runner.token)
            tokens.append(runner.token)
        }
        try await RunFixtures.start(harness, run)
        for token in tokens { try await RunFixtures.position(harness, RunFixtures.b, token: token) }
        return (try #require(UUID(uuidString: run)), tokens)
    }

    /// A feed of its own over the harness's database, read every `period`, for the duration of `body`.
    private static func withFeeds(
        _ harness: TestHarness, period: Duration, _ body: @escaping @Sendable (RunLiveFeeds) async throws -> Void
    ) async throws {
        try await TestDatabase.withClient(harness.databaseURL) { client in
            let runs = RunService(
                client: client, singleRequests: SingleRequestService(client: client, pseudonymizer: Pseudonymizer(client: client)),
                outbox: MailOutbox(client: client, publicURL: "http://127.0.0.1:8080"))
            try await body(RunLiveFeeds(runs: runs, period: period, logger: TestDatabase.logger))
        }
    }

    /// The next event of `events`, or nil when none came within `bound` (the stream is then stopped).
    private static func next(
        _ iterator: inout AsyncStream<ByteBuffer>.Iterator, stop: @escaping @Sendable () -> Void, within bound: Duration = .seconds(60)
    ) async -> ByteBuffer? {
        let watchdog = Task {
            try await Task.sleep(for: bound)
            stop()
        }
        defer { watchdog.cancel() }
        return await iterator.next()
    }

    /// Where an event's bytes are stored: the same address for two events means one buffer, not two copies.
    private static func storage(_ event: ByteBuffer) -> UnsafeRawPointer? {
        event.withUnsafeReadableBytes { UnsafeRawPointer($0.baseAddress) }
    }

    @Test("200 spectators of one run get one snapshot, encoded once, and the run is read once a period however many watch")
    func manySpectatorsOneRead() async throws {
        try await TestHarness.run { harness in
            let (run, tokens) = try await Self.liveRun(harness)
            let period = Duration.milliseconds(500)
            try await Self.withFeeds(harness, period: period) { feeds in
                let clock = ContinuousClock()
                let started = clock.now
                // They all arrive at once, before the first read has ended: that read is the only one.
                let watching = try await withThrowingTaskGroup(of: (AsyncStream<ByteBuffer>, @Sendable () -> Void).self) { group in
                    for _ in 0..<200 { group.addTask { try await feeds.watch(run) } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                // (The feed's reader may have begun its beat meanwhile on a slow machine: one read a period more.)
                let joined = clock.now - started
                let firstReads = await feeds.reads
                #expect(firstReads <= 2 + Int(joined / period), "spectators arriving together share the feed's first read: \(firstReads) reads")
                #expect(await feeds.counts == (runs: 1, spectators: 200))

                var iterators = watching.map { $0.0.makeAsyncIterator() }
                var firsts: [ByteBuffer] = []
                for index in iterators.indices {
                    firsts.append(try #require(await Self.next(&iterators[index], stop: watching[index].1)))
                }
                #expect(String(buffer: firsts[0]).hasPrefix("event: positions\ndata: {"))
                #expect(Set(firsts).count == 1, "every spectator gets the same snapshot")
                #expect(Set(firsts.map(Self.storage)).count == 1, "…in one buffer: encoded once, never copied per spectator")

                // A new fix: every spectator's next event shows it, again one buffer for all.
                try await RunFixtures.position(harness, RunFixtures.c, token: tokens[0])
                var seconds: [ByteBuffer] = []
                for index in iterators.indices {
                    var event = try #require(await Self.next(&iterators[index], stop: watching[index].1))
                    // A comment (the heartbeat) is not a snapshot; none is due within the test's few seconds.
                    while event == firsts[0] { event = try #require(await Self.next(&iterators[index], stop: watching[index].1)) }
                    seconds.append(event)
                }
                #expect(Set(seconds).count == 1 && Set(seconds.map(Self.storage)).count == 1)
                #expect(String(buffer: seconds[0]).contains("\(RunFixtures.c.latitude)"))

                // Reads follow the clock, not the spectators: one a period (and the first), with room for a late beat.
                let elapsed = clock.now - started
                let reads = await feeds.reads
                #expect(reads <= Int(elapsed / period) + 3, "\(reads) reads in \(elapsed) with 200 spectators")

                for (_, stop) in watching { stop() }
                let deadline = clock.now + .seconds(30)
                while await feeds.counts != (runs: 0, spectators: 0), clock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
                #expect(await feeds.counts == (runs: 0, spectators: 0), "the spectators left: the run is no longer read")
                let afterwards = await feeds.reads
                try await Task.sleep(for: period * 3)
                #expect(await feeds.reads == afterwards)
            }
        }
    }

    @Test("a spectator who never reads holds no one back, and when it reads it skips to the present")
    func slowSpectator() async throws {
        try await TestHarness.run { harness in
            let (run, tokens) = try await Self.liveRun(harness)
            try await Self.withFeeds(harness, period: .milliseconds(100)) { feeds in
                let (stuck, stopStuck) = try await feeds.watch(run)
                let (reading, stopReading) = try await feeds.watch(run)
                var iterator = reading.makeAsyncIterator()
                var last = try #require(await Self.next(&iterator, stop: stopReading))
                // More changes than a spectator's stream keeps: each one reaches the reading spectator in turn.
                let points = [RunFixtures.a, RunFixtures.c, RunFixtures.b, RunFixtures.a, RunFixtures.c, RunFixtures.b, RunFixtures.a, RunFixtures.c]
                for point in points {
                    try await RunFixtures.position(harness, point, token: tokens[1])
                    var event = try #require(await Self.next(&iterator, stop: stopReading), "the reading spectator was held back")
                    while event == last { event = try #require(await Self.next(&iterator, stop: stopReading)) }
                    last = event
                }
                // The stuck one has kept only the newest few events, the present last.
                stopStuck()
                var kept: [ByteBuffer] = []
                for await event in stuck { kept.append(event) }
                #expect(kept.count <= 4, "\(kept.count) events kept for a spectator who never read")
                #expect(kept.last == last)
                stopReading()
            }
        }
    }
}
