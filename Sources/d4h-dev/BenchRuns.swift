import ArgumentParser
import AsyncHTTPClient
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO
import Synchronization

extension Bench {
    struct Runs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: """
                Track4Run at scale: runners posting a position a second (against the same runners posting a heart-rate \
                sample a second), and the fan-out from an upload to the spectators' server-sent events as spectators are added.
                """)

        @Option(help: "The server to measure.") var url = "http://127.0.0.1:8080"
        @Option(help: "The server's database (to make the runners, their run and their sessions).") var databaseURL: String
        @Option(help: "Runners, each posting one position a second.") var runners = 1000
        @Option(help: "Seconds each ingest phase lasts.") var seconds = 20
        @Option(help: "Spectator counts to try, in order, until the fan-out's p99 reaches 2 s.") var spectators = "10,20,30,50,100,200,400,800"
        @Option(help: "Fixes per upload in the batched paths and the fan-out (a phone's upload every that many seconds).") var batch = 5
        @Option(help: "Seconds each spectator count of the fan-out lasts.") var fanOutSeconds = 20

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let setupStart = ContinuousClock.now
            let (runID, tokens) = try await withDatabase(url: databaseURL, logger: logger) { client in
                try await setUp(client: client, logger: logger)
            }
            let setup = Self.seconds(since: setupStart)
            let steps = spectators.split(separator: ",").compactMap { Int($0) }
            // Every spectator holds a connection for its whole step, beside the runners' uploads: with 256 at
            // most, 400 spectators took them all and the uploads (and 144 spectators) waited for one.
            let connections = 256 + (steps.max() ?? 0)
            try await HTTPClient.withHTTPClient(
                eventLoopGroup: HTTPClient.defaultEventLoopGroup,
                configuration: .init(connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections))
            ) { http in
                let positions = try await ingest(http: http, tokens: tokens, kind: .position, batch: 1)
                let samples = try await ingest(http: http, tokens: tokens, kind: .heartRate, batch: 1)
                let batchedPositions = try await ingest(http: http, tokens: tokens, kind: .position, batch: batch)
                let batchedSamples = try await ingest(http: http, tokens: tokens, kind: .heartRate, batch: batch)
                print("## Track4Run ingest (\(runners) runners, one fix a second each, \(seconds) s per path; setup \(Int(setup)) s)")
                print("| path | fixes offered/s | fixes stored/s | upload p50 ms | upload p99 ms | failed uploads | ratio to samples |")
                print("|---|---:|---:|---:|---:|---:|---:|")
                for (name, result, baseline) in [
                    ("POST /v1/me/positions, 1 fix per upload every second", positions, samples),
                    ("POST /v1/me/samples, 1 heart rate per upload every second (baseline)", samples, samples),
                    ("POST /v1/me/positions, \(batch) fixes per upload every \(batch) s", batchedPositions, batchedSamples),
                    ("POST /v1/me/samples, \(batch) per upload every \(batch) s (baseline)", batchedSamples, batchedSamples),
                ] {
                    print(
                        "| \(name) | \(runners) | \(Int(result.rate)) | \(ms(result.p50)) | \(ms(result.p99)) | \(result.failed) | "
                            + String(format: "%.2f", result.rate / baseline.rate) + " |")
                }
                print()
                print(
                    "## Fan-out: fix stored (upload answered) → spectator's event (\(runners) runners, \(batch) fixes per upload every \(batch) s; "
                        + "\(fanOutSeconds) s per count; delays timed by up to \(Self.measuringSpectators) spectators)")
                print("| spectators | events received | p50 ms | p99 ms | max ms | held |")
                print("|---:|---:|---:|---:|---:|---|")
                var largest = 0
                for count in steps {
                    let result = try await fanOut(http: http, runID: runID, tokens: tokens, spectators: count)
                    let held = result.connected == count && result.p99 < 2
                    print(
                        "| \(count) | \(result.events) | \(ms(result.p50)) | \(ms(result.p99)) | \(ms(result.max)) | "
                            + (held ? "yes" : "no (\(result.connected) connected)") + " |")
                    if held { largest = count } else { break }
                }
                print(
                    "Largest number of spectators held with p99 under 2 s: \(largest) (of those tried: \(steps.map(String.init).joined(separator: ", ")))."
                )
            }
        }

        private func ms(_ seconds: Double) -> String { String(Int((seconds * 1000).rounded())) }

        /// The runners (a synthetic population of their own), a live run they joined and checked in to through the
        /// services, and a session for each.
        func setUp(client: DatabasePool, logger: Logger) async throws -> (UUID, [String]) {
            let population = SyntheticPopulation(people: runners, days: 1, seed: 77_000 + UInt64(runners))
            _ = try await population.write(client: client, logger: logger)
            var people: [UUID] = []
            var tokens: [String] = []
            for number in 0..<runners {
                let email = population.email(ofPerson: number)
                let (id, token) = try await client.withConnection { connection -> (UUID, String) in
                    guard
                        let id = try await connection.query("SELECT id FROM accounts WHERE email = \(email)", logger: logger).collect().first?
                            .decode(UUID.self)
                    else { throw ValidationError("synthetic runner \(email) is missing") }
                    // Synthetic people have no password: the bench opens their sessions itself.
                    let (token, _) = try await SessionStore.create(accountID: id, ttlSeconds: 7200, on: connection, logger: logger)
                    return (id, token.text)
                }
                people.append(id)
                tokens.append(token)
            }
            let organiser = try await BenchCompany.create(client: client, logger: logger)
            let run = try await DemoRuns(client: client, logger: logger).startedRun(
                name: "Bench run \(UUID().uuidString.prefix(6))", organiser: organiser.id, runners: people, path: DemoRuns.loop,
                startedAt: Date().addingTimeInterval(-60), durationMinutes: 120)
            return (run, tokens)
        }

        enum Kind { case position, heartRate }

        struct IngestResult {
            var rate: Double
            var p50: Double
            var p99: Double
            var failed: Int
        }

        /// Every runner posts once a second (spread over the second) for `seconds` seconds; the rate is what was
        /// stored over the wall time until the last answer.
        /// Every runner posts `batch` fixes every `batch` seconds (one a second, as a phone records them),
        /// spread over the interval; the rate is the fixes stored over the wall time until the last answer.
        func ingest(http: HTTPClient, tokens: [String], kind: Kind, batch: Int, stored: Completions? = nil) async throws -> IngestResult {
            let tally = Tally()
            let start = ContinuousClock.now
            let path = DemoRuns.loop
            let (url, seconds) = (url, seconds)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, token) in tokens.enumerated() {
                    group.addTask {
                        // Each runner has its own offset within the second, as phones do.
                        for tick in stride(from: 0, to: seconds, by: batch) {
                            let due = start + .seconds(tick) + .milliseconds(index * 1000 * batch / max(tokens.count, 1))
                            let now = ContinuousClock.now
                            if due > now { try await Task.sleep(until: due) }
                            let taken = Date()
                            // The newest fix is taken now; the others a second apart before it.
                            let times = (0..<batch).reversed().map { Timestamp.rfc3339(taken.addingTimeInterval(-Double($0))) }
                            let at = times[times.count - 1]
                            var request: HTTPClientRequest
                            switch kind {
                            case .position:
                                request = HTTPClientRequest(url: url + "/v1/me/positions")
                                let fixes = times.enumerated().map { offset, time in
                                    let point = path.point(atMetres: Double((tick + offset) * 3 + index % 100))
                                    return #"{"at":"\#(time)","latitude":\#(point.latitude),"longitude":\#(point.longitude)}"#
                                }
                                request.body = .bytes(ByteBuffer(string: #"{"positions":["# + fixes.joined(separator: ",") + "]}"))
                            case .heartRate:
                                request = HTTPClientRequest(url: url + "/v1/me/samples")
                                let samples = times.enumerated().map { offset, time in
                                    #"{"type":"heart_rate","value":\#(120 + (tick + offset) % 40),"at":"\#(time)"}"#
                                }
                                request.body = .bytes(ByteBuffer(string: #"{"samples":["# + samples.joined(separator: ",") + "]}"))
                            }
                            request.method = .POST
                            request.headers.add(name: "Content-Type", value: "application/json")
                            request.headers.add(name: "Authorization", value: "Bearer \(token)")
                            let sent = ContinuousClock.now
                            do {
                                let response = try await http.execute(request, timeout: .seconds(30))
                                _ = try await response.body.collect(upTo: 1 << 16)
                                if response.status == .ok {
                                    let elapsed = Self.seconds(since: sent)
                                    tally.values.withLock { $0.append(elapsed) }
                                    // Runners joined in order: runner `index` wears bib `index + 1`.
                                    stored?.times.withLock { $0["\(index + 1)|\(at)"] = Date() }
                                } else {
                                    tally.failures.add(1, ordering: .relaxed)
                                }
                            } catch {
                                tally.failures.add(1, ordering: .relaxed)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let wall = Self.seconds(since: start)
            let sorted = tally.values.withLock { $0.sorted() }
            return IngestResult(
                rate: Double(sorted.count * batch) / wall, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99),
                failed: tally.failures.load(ordering: .relaxed))
        }

        struct FanOutResult {
            var connected: Int
            var events: Int
            var p50: Double
            var p99: Double
            var max: Double
        }

        /// `spectators` connect to the run's event stream while every runner posts a position a second; for
        /// the first 50 runners, the delay from a position being stored (its upload answered) to the first event
        /// that shows it, as seen by the first `measuringSpectators` of them. Those decode every event as the
        /// `RunLive` document it must be (a document that is not one fails the benchmark); the others only
        /// count the events in their stream's bytes (`EventCounter`), as a browser that draws nothing would,
        /// so the bench's own work per spectator stays small as spectators are added: it shares the two cores
        /// with the server and PostgreSQL, and what it spends is taken from them.
        func fanOut(http: HTTPClient, runID: UUID, tokens: [String], spectators: Int) async throws -> FanOutResult {
            let tally = Tally()
            let stored = Completions()
            let duration = fanOutSeconds
            let url = url
            let phase = self
            let measuring = min(spectators, Self.measuringSpectators)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for spectator in 0..<spectators {
                    group.addTask {
                        var request = HTTPClientRequest(url: url + "/v1/runs/\(runID.uuidString.lowercased())/live/events")
                        request.headers.add(name: "Accept", value: "text/event-stream")
                        guard let response = try? await http.execute(request, timeout: .seconds(30)), response.status == .ok else { return }
                        tally.connected.add(1, ordering: .relaxed)
                        let until = ContinuousClock.now + .seconds(duration)
                        if spectator < measuring {
                            let decoded = await Self.measure(response.body, until: until, stored: stored, tally: tally)
                            if decoded == 0 { tally.recordMalformed("a spectator received no positions event in \(duration) s") }
                        } else {
                            var counter = EventCounter()
                            do {
                                for try await chunk in response.body {
                                    tally.events.add(counter.count(in: chunk), ordering: .relaxed)
                                    if ContinuousClock.now > until { break }
                                }
                            } catch {}
                        }
                    }
                }
                group.addTask {
                    // The runners post while the spectators watch.
                    _ = try await phase.ingest(http: http, tokens: tokens, kind: .position, batch: phase.batch, seconds: duration, stored: stored)
                }
                try await group.waitForAll()
            }
            if let problem = tally.firstMalformed() { throw ValidationError("the run's event stream: \(problem)") }
            // A fix can show in an event before its upload's answer has reached the bench (the server read it
            // between its commit and the answer): no delay at all, counted as 0 now that the answer is known.
            let early = tally.unresolved.withLock { $0 }
            let times = stored.times.withLock { $0 }
            let delays =
                tally.values.withLock { $0 } + early.compactMap { key, received in times[key].map { max(0, received.timeIntervalSince($0)) } }
            let sorted = delays.sorted()
            return FanOutResult(
                connected: tally.connected.load(ordering: .relaxed), events: tally.events.load(ordering: .relaxed), p50: quantile(sorted, 0.5),
                p99: quantile(sorted, 0.99), max: sorted.last ?? 0)
        }

        /// The runners whose delays are timed (bibs 1–50).
        static let watched = 50

        /// A measuring spectator: splits its stream into events, decodes each `positions` event, and times
        /// every change of a watched runner's fix from its upload's answer to the event's last bytes arriving.
        /// Returns how many events it decoded.
        private static func measure(_ body: HTTPClientResponse.Body, until: ContinuousClock.Instant, stored: Completions, tally: Tally) async -> Int {
            var seen: [Int: String] = [:]
            var pending = ByteBuffer()
            var decoded = 0
            let decoder = JSONDecoder()
            do {
                for try await chunk in body {
                    // Stamped as the bytes arrive, before any of the bench's own work on them.
                    let received = Date()
                    pending.writeImmutableBuffer(chunk)
                    while let event = EventCounter.nextEvent(in: &pending) {
                        // `event: positions`, then the data on one line (a comment has no data line).
                        let data = Array("data: ".utf8)
                        guard let newline = event.firstIndex(of: UInt8(ascii: "\n")), event[(newline + 1)...].starts(with: data) else { continue }
                        let line = event[(newline + 1)...]
                        tally.events.add(1, ordering: .relaxed)
                        let live: RunLiveDocument
                        do { live = try decoder.decode(RunLiveDocument.self, from: Data(line.dropFirst(data.count))) } catch {
                            tally.recordMalformed("\(error): \(String(decoding: line.prefix(200), as: UTF8.self))")
                            continue
                        }
                        decoded += 1
                        for runner in live.runners where runner.bib <= watched && seen[runner.bib] != runner.at {
                            // The first event is the state on connecting: only changes after it count.
                            if seen[runner.bib] != nil {
                                let key = "\(runner.bib)|\(runner.at)"
                                if let answered = stored.times.withLock({ $0[key] }) {
                                    tally.values.withLock { $0.append(max(0, received.timeIntervalSince(answered))) }
                                } else {
                                    tally.unresolved.withLock { $0.append((key, received)) }
                                }
                            }
                            seen[runner.bib] = runner.at
                        }
                    }
                    if ContinuousClock.now > until { break }
                }
            } catch {}
            return decoded
        }

        /// How many spectators decode the events and time them.
        static let measuringSpectators = 10

        /// What the fan-out reads of a `positions` event (openapi.yaml `RunLive`).
        struct RunLiveDocument: Decodable {
            struct Runner: Decodable {
                var bib: Int
                var at: String
            }
            var runners: [Runner]
        }

        func ingest(http: HTTPClient, tokens: [String], kind: Kind, batch: Int, seconds: Int, stored: Completions) async throws -> IngestResult {
            var copy = self
            copy.seconds = seconds
            return try await copy.ingest(http: http, tokens: tokens, kind: kind, batch: batch, stored: stored)
        }

        private func quantile(_ sorted: [Double], _ q: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]
        }

        static func seconds(since start: ContinuousClock.Instant) -> Double {
            let elapsed = ContinuousClock.now - start
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
    }
}

/// When each watched position's upload was answered, by "bib|at".
final class Completions: Sendable {
    let times = Mutex<[String: Date]>([:])
}

/// What the bench's concurrent clients count.
private final class Tally: Sendable {
    let values = Mutex<[Double]>([])
    /// Fixes a spectator saw before the bench had their upload's answer: (bib|at, when the event arrived).
    let unresolved = Mutex<[(String, Date)]>([])
    let failures = Atomic<Int>(0)
    let connected = Atomic<Int>(0)
    let events = Atomic<Int>(0)
    private let malformed = Mutex<String?>(nil)

    /// Keeps the first event that was not what the API promises.
    func recordMalformed(_ problem: String) { malformed.withLock { $0 = $0 ?? problem } }
    func firstMalformed() -> String? { malformed.withLock { $0 } }
}

/// Server-sent events in a stream's bytes, found with `memchr` (a loop over the bytes, in a debug build,
/// would cost the bench more than the server's whole fan-out).
struct EventCounter {
    /// Whether the previous chunk ended in a newline, the next byte starts an event, and the current event is
    /// one (`event: …`) rather than a comment (`: still watching`).
    private var lastWasNewline = false
    private var atStart = true
    private var isEvent = false

    /// The events that end in `chunk`.
    mutating func count(in chunk: ByteBuffer) -> Int {
        chunk.withUnsafeReadableBytes { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
            var found = 0
            var index = 0
            while index < bytes.count {
                if atStart {
                    isEvent = bytes[index] == UInt8(ascii: "e")
                    atStart = false
                }
                guard let newline = memchr(base + index, 0x0A, bytes.count - index) else { break }
                let at = base.distance(to: UnsafeRawPointer(newline))
                // A blank line ends an event (the data never holds one: JSON escapes its newlines).
                if at > 0 ? bytes[at - 1] == 0x0A : lastWasNewline {
                    if isEvent { found += 1 }
                    atStart = true
                }
                index = at + 1
            }
            lastWasNewline = bytes[bytes.count - 1] == 0x0A
            return found
        }
    }

    /// Takes the first whole event (without its blank line) off `pending`, if one has arrived.
    static func nextEvent(in pending: inout ByteBuffer) -> [UInt8]? {
        let end: Int? = pending.withUnsafeReadableBytes { bytes in
            guard let base = bytes.baseAddress else { return nil }
            var index = 0
            while index < bytes.count, let newline = memchr(base + index, 0x0A, bytes.count - index) {
                let at = base.distance(to: UnsafeRawPointer(newline))
                if at + 1 < bytes.count, bytes[at + 1] == 0x0A { return at }
                index = at + 1
            }
            return nil
        }
        guard let end, let event = pending.readBytes(length: end) else { return nil }
        pending.moveReaderIndex(forwardBy: 2)
        pending.discardReadBytes()
        return event
    }
}
