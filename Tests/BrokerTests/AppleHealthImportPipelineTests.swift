import BrokerTestSupport
import Foundation
import PostgresNIO
import Synchronization
import Testing

@testable import BrokerDomain
@testable import BrokerServer

/// The import parses batch N+1 while it stores batch N (`AppleHealthImport`, `AppleHealthBatchProducer`). These
/// check that the overlap changes nothing a person can see, and that it keeps the import all or nothing.
///
/// Memory: the pipeline holds at most two batches (the one being stored, the one being parsed, which is awaited
/// before the next begins), each at most `samplesPerBatch` samples and as many sourced records plus one 64 KiB
/// chunk's worth: it is bounded by construction, not measured here (`AppleHealthImportJobTests.largeImport`
/// reports the peak of a 200 MB import, and bench/run's import benchmark the peak RSS of a 1 GB one).
@Suite("Apple Health import pipeline", .serialized)
struct AppleHealthImportPipelineTests {
    /// A realistic export (blood pressure written twice, four invalid records, several sources) on disk.
    static func withExport<T>(bytes: Int, seed: UInt64, _ body: (URL) async throws -> T) async throws -> T {
        let (xml, _, _) = try AppleHealthImportTests.realisticExport(bytes: bytes, seed: seed)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).xml")
        try Data(xml).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        return try await body(url)
    }

    static func importer(_ client: DatabasePool, samplesPerBatch: Int, bytesPerBatch: UInt64) -> AppleHealthImport {
        var importer = AppleHealthImport(client: client)
        importer.samplesPerBatch = samplesPerBatch
        importer.bytesPerBatch = bytesPerBatch
        return importer
    }

    /// A person's samples and daily rollups, as text to compare.
    static func stored(_ harness: TestHarness, _ userID: String) async throws -> (samples: [String], rollups: [String]) {
        let samples = try await harness.sql(
            "SELECT type || ' ' || at || ' ' || value FROM samples WHERE user_id = '\(userID)' ORDER BY type, at")
        let rollups = try await harness.sql(
            """
            SELECT type || ' ' || day || ' ' || count || ' ' || sum || ' ' || min || ' ' || max FROM daily_rollups
            WHERE user_id = '\(userID)' ORDER BY type, day
            """)
        return (try samples.map { try $0.decode(String.self) }, try rollups.map { try $0.decode(String.self) })
    }

    @Test("an import cut into many batches stores exactly what one batch stores: same rows, rollups, counts and skips")
    func pipelinedEqualsSequential() async throws {
        try await Self.withExport(bytes: 3_000_000, seed: 21) { file in
            try await TestHarness.run { harness in
                let pipelined = try await harness.accountID(try await harness.activeUser())
                let sequential = try await harness.accountID(
                    try await harness.activeUser(TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode())))
                let batches = Mutex(0)
                let (many, one, again, onceAgain) = try await TestDatabase.withClient(harness.databaseURL) { client in
                    // 500 samples, 500 sourced records or 64 KiB a batch: dozens of batches, each parsed while the
                    // one before it is stored.
                    let small = Self.importer(client, samplesPerBatch: 500, bytesPerBatch: 64 << 10)
                    // One batch: the whole file parsed, then stored (the order of the import before the pipeline).
                    let whole = Self.importer(client, samplesPerBatch: .max, bytesPerBatch: .max)
                    let many = try await small.run(
                        file: file, format: .xml, userID: UUID(uuidString: pipelined)!, logger: TestDatabase.logger,
                        progress: { _ in batches.withLock { $0 += 1 } })
                    let one = try await whole.run(file: file, format: .xml, userID: UUID(uuidString: sequential)!, logger: TestDatabase.logger)
                    // Imported again, everything is already there, whichever way the file is cut.
                    let again = try await small.run(file: file, format: .xml, userID: UUID(uuidString: pipelined)!, logger: TestDatabase.logger)
                    let onceAgain = try await whole.run(
                        file: file, format: .xml, userID: UUID(uuidString: sequential)!, logger: TestDatabase.logger)
                    return (many, one, again, onceAgain)
                }
                #expect(batches.withLock { $0 } > 20, "the file was cut into \(batches.withLock { $0 }) batches")
                #expect(many == one, "pipelined \(many) ≠ sequential \(one)")
                #expect(many.stored > 1000 && many.repeatedInFile > 0 && many.invalid.count == 4 && !many.skipped.isEmpty, "\(many)")
                #expect(again == onceAgain)
                #expect(again.stored == 0 && again.alreadyThere == many.stored + many.repeatedInFile, "\(again)")
                let (manyRows, manyRollups) = try await Self.stored(harness, pipelined)
                let (oneRows, oneRollups) = try await Self.stored(harness, sequential)
                #expect(manyRows.count == many.stored)
                #expect(manyRows == oneRows)
                #expect(!manyRollups.isEmpty && manyRollups == oneRollups)
            }
        }
    }

    /// Nothing of the person's remains: no sample, rollup, arrival or time zone.
    static func expectNothingStored(_ harness: TestHarness, _ userID: String) async throws {
        #expect(try await harness.int("SELECT count(*) FROM samples WHERE user_id = '\(userID)'") == 0)
        #expect(try await harness.int("SELECT count(*) FROM daily_rollups WHERE user_id = '\(userID)'") == 0)
        #expect(try await harness.int("SELECT count(*) FROM sample_batches WHERE user_id = '\(userID)'") == 0)
        #expect(try await harness.int("SELECT coalesce(max(last_arrival), 0) FROM sample_arrivals WHERE user_id = '\(userID)'") == 0)
        #expect(try await harness.int("SELECT count(*) FROM users WHERE account_id = '\(userID)' AND time_zone IS NOT NULL") == 0)
    }

    @Test("a database error in a late batch, while the next one is being parsed, stores nothing and ends the parser")
    func lateDatabaseErrorStoresNothing() async throws {
        try await Self.withExport(bytes: 3_000_000, seed: 22) { file in
            try await TestHarness.run { harness in
                let userID = try await harness.accountID(try await harness.activeUser())
                // A real error of the database, raised by the write of a batch well into the file.
                _ = try await harness.sql(
                    """
                    CREATE FUNCTION refuse_late_batch() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN RAISE EXCEPTION 'late batch refused'; END $$
                    """)
                _ = try await harness.sql(
                    """
                    CREATE TRIGGER refuse_late_batch BEFORE INSERT ON sample_batches
                    FOR EACH ROW WHEN (NEW.last_arrival > 1000) EXECUTE FUNCTION refuse_late_batch()
                    """)
                // The most stored and read before the error: the error must come mid-file, with batches left to parse.
                let seen = Mutex((stored: 0, read: Int64(0), total: Int64(0)))
                let outcome = await #expect(throws: (any Error).self) {
                    try await TestDatabase.withClient(harness.databaseURL) { client in
                        try await Self.importer(client, samplesPerBatch: 500, bytesPerBatch: 64 << 10).run(
                            file: file, format: .xml, userID: UUID(uuidString: userID)!, logger: TestDatabase.logger,
                            progress: { progress in seen.withLock { $0 = (max($0.stored, progress.stored), progress.bytesRead, progress.bytesTotal) }
                            })
                    }
                }
                #expect(String(reflecting: outcome).contains("late batch refused"), "\(String(reflecting: outcome))")
                let (stored, read, total) = seen.withLock { $0 }
                #expect(stored >= 500 && read < total, "the error came after \(stored) samples were stored and \(read) of \(total) bytes read")
                try await Self.expectNothingStored(harness, userID)
            }
        }
    }

    /// What the progress callback saw, shared with the import's task.
    final class Seen: Sendable {
        let value = Mutex((stored: 0, read: Int64(0), total: Int64(0)))
    }

    @Test("an import cancelled after several batches stores nothing")
    func cancelledLateStoresNothing() async throws {
        try await Self.withExport(bytes: 3_000_000, seed: 23) { file in
            try await TestHarness.run { harness in
                let userID = try await harness.accountID(try await harness.activeUser())
                let seen = Seen()
                // Only the import's task is cancelled, as a stopping server cancels a job's: the pool lives on.
                try await TestDatabase.withClient(harness.databaseURL) { client in
                    let task = Task {
                        try await Self.importer(client, samplesPerBatch: 500, bytesPerBatch: 64 << 10).run(
                            file: file, format: .xml, userID: UUID(uuidString: userID)!, logger: TestDatabase.logger,
                            progress: { progress in
                                // Cancelled from inside, between two batches: no timing involved.
                                guard progress.stored >= 1000 else { return }
                                seen.value.withLock { $0 = (max($0.stored, progress.stored), progress.bytesRead, progress.bytesTotal) }
                                withUnsafeCurrentTask { $0?.cancel() }
                            })
                    }
                    await #expect(throws: CancellationError.self) { try await task.value }
                }
                let (stored, read, total) = seen.value.withLock { $0 }
                #expect(stored >= 1000 && read < total, "cancelled after \(stored) samples were stored and \(read) of \(total) bytes read")
                try await Self.expectNothingStored(harness, userID)
            }
        }
    }
}
