import AutomatedSOS
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// The device's path for new samples: the AutomatedSOS monitor first (an alert never waits for the
/// network), then the durable outbox, then the server in batches with retries.
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

    public enum UploadError: Error, Equatable {
        /// The server refused a batch for a reason retrying will not fix (e.g. 401, 422); it stays queued.
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

    /// Uploads every pending batch, oldest first; returns how many samples the server stored as new.
    /// A call while another flush runs joins it (and gets its count), so two flushes never send the same
    /// batch side by side: actors are reentrant while the first awaits the network.
    @discardableResult
    public func flush() async throws -> Int {
        if let running { return try await running.value }
        let task = Task { try await self.uploadPending() }
        running = task
        defer { running = nil }
        return try await task.value
    }

    private var running: Task<Int, any Error>?

    private func uploadPending() async throws -> Int {
        var stored = 0
        while !outbox.pending.isEmpty {
            let start = outbox.firstPendingPosition
            let batch = Array(outbox.pending.prefix(options.batchSize))
            stored += try await upload(batch)
            try outbox.acknowledge(through: start + batch.count)
        }
        return stored
    }

    private func upload(_ batch: [SOSSample]) async throws -> Int {
        let transcoder = RFC3339FractionalDateTranscoder()
        let body = Components.Schemas.SampleUpload(
            samples: try batch.map { .init(_type: $0.type.rawValue, value: $0.value, at: try transcoder.encode($0.at)) })
        var backoff = options.initialBackoff
        for attempt in 1...max(1, options.attempts) {
            // How long the server asked us to wait (a 429's Retry-After), if longer than the backoff.
            var serverDelay: Duration = .zero
            do {
                switch try await client.uploadSamples(body: .json(body)) {
                case .ok(let ok):
                    return try ok.body.json.accepted
                case .tooManyRequests(let limited):
                    // The account's upload budget is spent for now; the batch is fine, so wait and resend it.
                    serverDelay = .seconds(limited.headers.retryAfter)
                case .default(let status, _) where status >= 500:
                    break  // The server is busy or broken: worth another try.
                case .default(let status, _): throw UploadError.rejected(status: status)
                case .badRequest: throw UploadError.rejected(status: 400)
                case .unauthorized: throw UploadError.rejected(status: 401)
                case .forbidden: throw UploadError.rejected(status: 403)
                case .contentTooLarge: throw UploadError.rejected(status: 413)
                case .unsupportedMediaType: throw UploadError.rejected(status: 415)
                case .unprocessableContent: throw UploadError.rejected(status: 422)
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
