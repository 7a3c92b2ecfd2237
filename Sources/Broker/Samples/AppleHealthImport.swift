import Foundation
import Logging
import PostgresNIO

/// Imports an Apple Health export through the same atomic, idempotent path as uploads: the file is read in
/// chunks (constant memory whatever its size), parsed incrementally, and stored in one transaction that
/// commits only when the whole file was read — a truncated or foreign file stores nothing.
public struct AppleHealthImport: Sendable {
    public let client: DatabasePool

    public init(client: DatabasePool) { self.client = client }

    public struct Result: Sendable, Equatable {
        public var accepted: Int
        public var duplicates: Int
        /// Records not imported, by HealthKit identifier (or `<type> (out of range)` for converted values outside
        /// the type's accepted range).
        public var skipped: [String: Int]
    }

    /// Samples are stored in batches of this many, each through `SampleStore.ingest` on the one transaction.
    static let batchSize = 10_000

    public func run(file: URL, format: AppleHealthExportReader.Format?, userID: UUID, logger: Logger) async throws -> Result {
        let reader: AppleHealthExportReader
        do {
            reader = try AppleHealthExportReader(contentsOf: file, format: format)
        } catch {
            throw SampleError.importFailed(error.message)
        }
        do {
            return try await client.withTransaction(logger: logger) { connection in
                var parser = AppleHealthParser()
                var result = Result(accepted: 0, duplicates: 0, skipped: [:])
                var pending: [Sample] = []
                pending.reserveCapacity(Self.batchSize)
                let latest = Date().addingTimeInterval(SampleBatch.allowedClockSkew)

                func store() async throws {
                    let stored = try await SampleStore.ingest(pending, for: userID, on: connection, logger: logger)
                    result.accepted += stored.accepted
                    result.duplicates += stored.duplicates
                    pending.removeAll(keepingCapacity: true)
                }

                do {
                    while let chunk = try reader.next() {
                        for sample in try parser.feed(chunk) {
                            // The parser converts units; what it yields is checked like any upload.
                            if sample.type.range.contains(sample.value), sample.at <= latest {
                                pending.append(sample)
                            } else {
                                result.skipped["\(sample.type.rawValue) (out of range)", default: 0] += 1
                            }
                        }
                        if pending.count >= Self.batchSize { try await store() }
                    }
                    try parser.finish()
                } catch let error as AppleHealthImportError {
                    throw SampleError.importFailed(error.message)
                }
                if !pending.isEmpty { try await store() }
                result.skipped.merge(parser.skipped) { $0 + $1 }
                return result
            }
        } catch {
            throw PostgresErrors.unwrapTransaction(error)
        }
    }
}
