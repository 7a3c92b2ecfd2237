import AutomatedSOS
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// The device's path for new samples: the AutomatedSOS monitor first (an alert never waits for the
/// network), then the durable outbox, then the server in batches with retries.
///
/// A sample the server refuses (a 422 naming it, e.g. `samples[3].at` for a time in the future from a
/// device with a wrong clock) is moved to the outbox's quarantine with the server's messages
/// (`rejectedSamples`), and the rest of its batch is sent without it; so one bad reading never holds up the
/// ones after it, and is never silently dropped either. Once the cause is gone (the clock fixed, the server
/// upgraded), `requeueRejected()` queues the refused samples again.
public actor MonitoredUploader {
    public struct Options: Sendable {
        /// Samples per upload request (the server takes up to 10,000).
        public var batchSize = 1000
        /// Attempts per batch before `flush` gives up (it keeps the batch for the next flush).
        public var attempts = 5
        /// The wait before the second attempt; it doubles after each failure.
        public var initialBackoff: Duration = .seconds(1)
        public var maximumBackoff: Duration = .seconds(60)

        public init() {}
    }

    /// What one `flush` did.
    public struct FlushReport: Sendable, Equatable {
        /// Samples the server stored as new (re-sent ones it already had are not counted).
        public var stored = 0
        /// Samples the server refused, now in `rejectedSamples` instead of the queue.
        public var rejected = 0

        public init(stored: Int = 0, rejected: Int = 0) {
            self.stored = stored
            self.rejected = rejected
        }
    }

    public enum UploadError: Error, Equatable {
        /// The server refused a batch for a reason retrying will not fix (e.g. 401, or a 422 that names no
        /// sample of the batch, so there is no telling which one is wrong); it stays queued.
        case rejected(status: Int)
        /// Every attempt failed with a network error or a server error.
        case gaveUp(attempts: Int)
    }

    private var monitor: SOSMonitor?
    private let onAlert: @Sendable (SOSAlert) -> Void
    private let outbox: SampleOutbox
    private let client: Client
    private let options: Options
    private let sleep: @Sendable (Duration) async throws -> Void

    /// - Parameters:
    ///   - monitor: nil when AutomatedSOS is off (`SOSEnablement.makeMonitor()`); samples are still uploaded.
    ///   - onAlert: called synchronously, before the sample is even written to disk.
    ///   - sleep: how backoff waits; tests pass one that returns at once.
    public init(
        monitor: SOSMonitor?, onAlert: @escaping @Sendable (SOSAlert) -> Void, outboxDirectory: URL, client: Client,
        options: Options = .init(), sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) throws {
        self.monitor = monitor
        self.onAlert = onAlert
        self.outbox = try SampleOutbox(directory: outboxDirectory)
        self.client = client
        self.options = options
        self.sleep = sleep
    }

    /// Samples recorded but not yet confirmed by the server.
    public var pendingCount: Int { outbox.pending.count }

    /// Samples the server refused (oldest first), each with its messages: kept on the disk
    /// (`rejected.jsonl` in the outbox directory) until `discardRejected()`, so that the app can show them.
    public var rejectedSamples: [RejectedSample] { outbox.rejected }

    /// Forgets the refused samples, on the disk too.
    public func discardRejected() throws { try outbox.discardRejected() }

    /// Puts every refused sample back in the queue, so that the next `flush()` sends it again (for a refusal
    /// that can go away: a time in the future before the device's clock was fixed, a type the server did not
    /// know yet); one refused again goes back to `rejectedSamples`. Returns how many were requeued. Safe
    /// against a crash at any point, and while a flush is running (see `SampleOutbox.requeueRejected()`).
    @discardableResult
    public func requeueRejected() throws -> Int { try outbox.requeueRejected() }

    /// Checks a new sample for an emergency, then queues it durably. Returns the alerts it raised.
    @discardableResult
    public func record(_ sample: SOSSample) throws -> [SOSAlert] {
        var alerts: [SOSAlert] = []
        monitor?.ingest(sample) { alert in
            alerts.append(alert)
            onAlert(alert)
        }
        try outbox.append(CollectionOfOne(sample))
        return alerts
    }

    /// Uploads every pending batch, oldest first; reports how many samples the server stored as new and how
    /// many it refused (those are in `rejectedSamples`). A call while another flush runs joins it (and gets
    /// its report), so two flushes never send the same batch side by side: actors are reentrant while the
    /// first awaits the network.
    @discardableResult
    public func flush() async throws -> FlushReport {
        if let running { return try await running.value }
        let task = Task { try await self.uploadPending() }
        running = task
        defer { running = nil }
        return try await task.value
    }

    private var running: Task<FlushReport, any Error>?

    /// Each batch is a prefix of the pending log and is acknowledged whole, only once every sample of it is
    /// either stored by the server or written (fsync'd) to the quarantine. So refusing samples from the
    /// middle of a batch needs no rewrite of the log: quarantine them, send the rest, then acknowledge. A crash
    /// anywhere in between leaves the batch pending and its refused samples quarantined too; the next flush
    /// skips those (`isRejected`) and re-sends the rest, which the server, idempotent on `(type, at)`, counts
    /// as duplicates. Nothing is lost, nothing is stored twice, and nothing is quarantined twice.
    ///
    /// What is left to send is worked out again after every request, from the quarantine as it is then, and
    /// the batch is acknowledged with no suspension after that: `requeueRejected()` can run while a request
    /// is in flight (the actor is reentrant) and take a sample of this batch out of the quarantine without
    /// appending it again (it is still pending), so that sample is sent in this batch rather than acknowledged
    /// unsent.
    private func uploadPending() async throws -> FlushReport {
        var report = FlushReport()
        while !outbox.pending.isEmpty {
            let start = outbox.firstPendingPosition
            let batch = Array(outbox.pending.prefix(options.batchSize))
            var stored = [Bool](repeating: false, count: batch.count)
            // Positions in `batch` neither stored by the server nor in the quarantine now.
            func unsent() -> [Int] { batch.indices.filter { !stored[$0] && !outbox.isRejected(batch[$0]) } }
            var remaining = unsent()
            // Each 422 takes at least one sample out, so this ends (the server lists at most 100 per answer).
            while !remaining.isEmpty {
                switch try await upload(remaining.map { batch[$0] }) {
                case .stored(let count):
                    report.stored += count
                    for position in remaining { stored[position] = true }
                case .refused(let reasons):
                    let now = Date()
                    let refused = reasons.keys.sorted().map {
                        RejectedSample(sample: batch[remaining[$0]], messages: reasons[$0]!, rejectedAt: now)
                    }
                    report.rejected += try outbox.quarantine(refused)
                }
                remaining = unsent()
            }
            try outbox.acknowledge(through: start + batch.count)
        }
        return report
    }

    private enum Outcome {
        /// How many samples the server stored as new.
        case stored(Int)
        /// The server refused these samples of the batch (by index), with its messages for each.
        case refused([Int: [String]])
    }

    /// The samples a 422's field errors name, by index in the batch, with the messages for each (led by the
    /// sample's field: `samples[3].at` + `is more than 5 minutes in the future` gives `at is more than …`).
    /// Nil when no error names a sample, or one names an index outside the batch: then the answer cannot be
    /// matched to what was sent. Errors about the whole upload (`samples`, e.g. "and 20 more invalid
    /// samples") are left out; the samples they stand for are refused by the next answer.
    static func refusedSamples(_ errors: [Components.Schemas.FieldError], batchCount: Int) -> [Int: [String]]? {
        var reasons: [Int: [String]] = [:]
        for error in errors {
            guard error.field.hasPrefix("samples[") else { continue }
            let rest = error.field.dropFirst("samples[".count)
            guard let bracket = rest.firstIndex(of: "]"), let index = Int(rest[..<bracket]) else { continue }
            guard (0..<batchCount).contains(index) else { return nil }
            var field = rest[rest.index(after: bracket)...]
            if field.first == "." { field = field.dropFirst() }
            reasons[index, default: []].append(field.isEmpty ? error.message : "\(field) \(error.message)")
        }
        return reasons.isEmpty ? nil : reasons
    }

    private func upload(_ batch: [SOSSample]) async throws -> Outcome {
        let transcoder = RFC3339FractionalDateTranscoder()
        // The device's zone, so the server can put the person's data on their local days until they choose
        // one in their profile; only a real IANA name (the server refuses the rest, and the whole batch with it).
        let zone = TimeZone.current.identifier
        let body = Components.Schemas.SampleUpload(
            timeZone: TimeZone.knownTimeZoneIdentifiers.contains(zone) ? zone : nil,
            samples: try batch.map { .init(_type: $0.type.rawValue, value: $0.value, at: try transcoder.encode($0.at)) })
        var backoff = options.initialBackoff
        for attempt in 1...max(1, options.attempts) {
            // How long the server asked us to wait (a 429's Retry-After), if longer than the backoff.
            var serverDelay: Duration = .zero
            do {
                switch try await client.uploadSamples(body: .json(body)) {
                case .ok(let ok):
                    return .stored(try ok.body.json.accepted)
                case .tooManyRequests(let limited):
                    // The account's upload budget is spent for now; the batch is fine, so wait and resend it.
                    serverDelay = .seconds(limited.headers.retryAfter)
                case .serviceUnavailable(let busy):
                    // Nothing was stored and the server said when to come back.
                    serverDelay = .seconds(busy.headers.retryAfter)
                case .default(let status, _) where status >= 500:
                    break  // The server is busy or broken: worth another try.
                case .default(let status, _): throw UploadError.rejected(status: status)
                case .badRequest: throw UploadError.rejected(status: 400)
                case .unauthorized: throw UploadError.rejected(status: 401)
                case .forbidden: throw UploadError.rejected(status: 403)
                case .contentTooLarge: throw UploadError.rejected(status: 413)
                case .unsupportedMediaType: throw UploadError.rejected(status: 415)
                case .unprocessableContent(let invalid):
                    // Validation failed and nothing was stored: set aside the samples it names, if it names any.
                    let errors = (try? invalid.body.applicationProblemJson.errors) ?? []
                    guard let reasons = Self.refusedSamples(errors, batchCount: batch.count) else {
                        throw UploadError.rejected(status: 422)
                    }
                    return .refused(reasons)
                }
            } catch let error as UploadError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                // A network error, or a server error the client surfaced as one: retry.
            }
            if attempt < options.attempts {
                try await sleep(max(backoff, serverDelay))
                backoff = min(backoff * 2, options.maximumBackoff)
            }
        }
        throw UploadError.gaveUp(attempts: options.attempts)
    }
}
