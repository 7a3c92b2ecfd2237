import Foundation
import Logging
import PostgresNIO

/// Imports an Apple Health export through the same atomic, idempotent path as uploads: the file is read in
/// chunks (constant memory whatever its size), parsed incrementally, and stored in one transaction that
/// commits only when the whole file was read — a truncated or foreign file stores nothing.
package struct AppleHealthImport: Sendable {
    package let client: DatabasePool
    /// What "in the future" is judged against.
    let clock: WallClock
    /// How the file is cut into batches (`batchSize`, `bytesPerBatch`); tests cut a small file into many.
    var samplesPerBatch = Self.batchSize
    var bytesPerBatch = Self.bytesPerBatch

    package init(client: DatabasePool, clock: WallClock = .system) {
        self.client = client
        self.clock = clock
    }

    /// What an import did, in the terms a person can check against their phone.
    package struct Result: Sendable, Equatable, Codable {
        /// Samples new to Data4Help, stored by this import.
        package var stored: Int
        /// Samples of the file Data4Help held before this import began (an earlier import or upload); every copy
        /// counts, so that importing a file again gives `alreadyThere` = all its samples.
        package var alreadyThere: Int
        /// Further copies of samples this import stored (Apple writes each blood pressure reading twice: inside
        /// its correlation and on its own); stored once, not an error.
        /// `stored + alreadyThere + repeatedInFile` is every usable sample record of the file.
        package var repeatedInFile: Int
        /// Records Data4Help does not keep, by reason, then HealthKit identifier; most frequent first within a reason.
        package var skipped: [Skipped]
        /// Records of a kind Data4Help keeps that cannot be used.
        package var invalid: Invalid
        /// The last valid HKTimeZone of the export, nil when it has none.
        package var timeZone: String?
        /// The workouts' GPS tracks of an iPhone's export.zip (`workout-routes/*.gpx`), stored as positions;
        /// nil for an export.xml alone (and for imports recorded before routes were read).
        package var routes: Routes?

        package struct Routes: Sendable, Equatable, Codable {
            /// Route files read.
            package var files: Int
            /// Positions new to Data4Help.
            package var stored: Int
            /// Positions held already (an earlier import or upload), or repeated across the files.
            package var alreadyThere: Int
        }

        package struct Skipped: Sendable, Equatable, Codable {
            package var reason: String
            package var identifier: String
            package var count: Int
        }

        package struct Invalid: Sendable, Equatable, Codable {
            package var count: Int
            /// The first few, with their line numbers in export.xml.
            package var examples: [AppleHealthInvalidRecord]
        }
    }

    /// How far an import has got; reported after every chunk read.
    package struct Progress: Sendable, Equatable {
        /// The upload's size (the archive's, for a zip) and how much of it was read.
        package var bytesTotal: Int64
        package var bytesRead: Int64
        /// `<Record>` elements read (imported, skipped or invalid).
        package var recordsRead: Int
        /// Samples stored so far; they become visible (and permanent) only when the import commits.
        package var stored: Int
    }

    /// Work that must share the import's transaction: `begin` runs first in it, `finish` last before it commits.
    /// A background job locks its row in `begin` and records its outcome in `finish`, atomically with the data.
    package struct TransactionHooks: Sendable {
        package var begin: (@Sendable (PostgresConnection) async throws -> Void)?
        package var finish: (@Sendable (Result, Progress, PostgresConnection) async throws -> Void)?

        package init(
            begin: (@Sendable (PostgresConnection) async throws -> Void)? = nil,
            finish: (@Sendable (Result, Progress, PostgresConnection) async throws -> Void)? = nil
        ) {
            self.begin = begin
            self.finish = finish
        }
    }

    /// Samples are stored in batches of this many, each through `SampleStore.ingest` on the one transaction; records
    /// of cumulative types are staged in batches of as many.
    static let batchSize = 10_000
    /// A batch is also cut after this many bytes of the upload, so that progress is reported through a stretch of
    /// records Data4Help skips.
    static let bytesPerBatch: UInt64 = 4 << 20

    /// The producer's next batch, in the import's terms: a file that cannot be imported is `importFailed`.
    private static func nextBatch(of producer: AppleHealthBatchProducer) async throws -> AppleHealthBatchProducer.Batch? {
        do {
            return try producer.next()
        } catch let error as AppleHealthImportError {
            throw SampleError.importFailed(error.message)
        }
    }

    /// Imports `file`; throws `SampleError.importFailed` (nothing stored) for a file that cannot be imported, and
    /// `CancellationError` (nothing stored) when the task is cancelled.
    package func run(
        file: URL, format: AppleHealthExportReader.Format?, userID: UUID, logger: Logger,
        progress: (@Sendable (Progress) async -> Void)? = nil, hooks: TransactionHooks = .init()
    ) async throws -> Result {
        let reader: AppleHealthExportReader
        do {
            reader = try AppleHealthExportReader(contentsOf: file, format: format)
        } catch {
            throw SampleError.importFailed(error.message)
        }
        let total = Int64(reader.size)
        do {
            return try await client.withTransaction(logger: logger) { connection in
                try await hooks.begin?(connection)
                // Adopting the export's time zone at the end takes the person's row: take it before the first
                // batch takes the arrival row, in the order every other writer of both follows.
                try await TimeZoneStore.lockPerson(userID, on: connection, logger: logger)
                var parser = AppleHealthParser(now: clock.now)
                // Steps, distance, energy, standing and sleep wait in the database until every source is known.
                parser.separatesSources = true
                let producer = AppleHealthBatchProducer(
                    reader: reader, parser: parser, samplesPerBatch: samplesPerBatch, sourcedPerBatch: samplesPerBatch,
                    bytesPerBatch: bytesPerBatch)
                var stored = 0
                var duplicates = 0
                var alreadyThere = 0
                // "Already there" means stored before the import began: the arrival number before its first batch.
                var existingUpTo: Int64?

                // Every copy of a sample held before the import counts as already there, wherever it is in the
                // file; a batch counts one per distinct (type, at), so copies within a batch go in a batch of
                // their own (rare: Apple's repeated blood pressure records are far apart in the file).
                func store(_ samples: [Sample]) async throws {
                    var rest = samples
                    while !rest.isEmpty {
                        let (distinct, again) = Self.splitRepeats(rest)
                        let batch = try await SampleStore.ingest(
                            distinct, for: userID, existingUpTo: existingUpTo, on: connection, logger: logger)
                        if existingUpTo == nil { existingUpTo = batch.arrivalBase }
                        stored += batch.accepted
                        duplicates += batch.duplicates
                        alreadyThere += batch.alreadyThere
                        rest = again
                    }
                }

                // A pipeline of two: while batch N is written on the connection, batch N+1 is parsed in a child
                // task, and it is awaited before batch N+2 is begun. So at most two batches exist at any time
                // (memory stays flat whatever the file's size), the database's work and the parser's overlap,
                // and the statements still run one after the other in file order on the one transaction. An
                // error on either side ends the import: a database error leaves the scope, which cancels the
                // child and waits for it (it stops at its next chunk); a parsing error is thrown where the
                // batch is awaited. Either way the transaction rolls back and nothing is stored.
                await progress?(Progress(bytesTotal: total, bytesRead: 0, recordsRead: 0, stored: 0))
                var batch = try await Self.nextBatch(of: producer)
                while let current = batch {
                    // Before the batch's statements, as before every chunk's: a cancelled import sends no more.
                    try Task.checkCancellation()
                    async let following = Self.nextBatch(of: producer)
                    try await AppleHealthSourceOverlapStore.stage(current.sourced, on: connection, logger: logger)
                    try await store(current.samples)
                    await progress?(Progress(bytesTotal: total, bytesRead: current.bytesRead, recordsRead: current.recordsSeen, stored: stored))
                    batch = try await following
                }
                parser = producer.parser
                // Each period of a cumulative type once, from its highest-priority source; then stored in pages.
                let covered = try await AppleHealthSourceOverlapStore.resolve(
                    priority: parser.sourcePriority, on: connection, logger: logger)
                var after: Int64 = 0
                while covered != nil {
                    try Task.checkCancellation()
                    let page = try await AppleHealthSourceOverlapStore.keptPage(
                        after: after, limit: Self.batchSize, on: connection, logger: logger)
                    guard !page.samples.isEmpty else { break }
                    try await store(page.samples)
                    after = page.last
                    await progress?(Progress(bytesTotal: total, bytesRead: total, recordsRead: parser.recordsSeen, stored: stored))
                }
                let routes = try await importRoutes(of: reader, userID: userID, on: connection, logger: logger)
                var skipped = parser.skipped
                for (type, count) in covered ?? [:] {
                    let identifier = AppleHealthRecordType.allCases.first { $0.sampleType == type }?.identifier ?? type.rawValue
                    skipped[AppleHealthSkip(reason: .coveredByAnotherSource, identifier: identifier), default: 0] += count
                }
                // The phone's zone (HKTimeZone) becomes the person's if they have none: their rollups, so far on
                // UTC days, are then rebuilt on local days, inside this transaction like everything else.
                if let zone = parser.timeZone, TimeZoneName.isValid(zone) {
                    try await TimeZoneStore.adoptIfUnknown(zone, for: userID, on: connection, logger: logger)
                }
                let done = Progress(bytesTotal: total, bytesRead: total, recordsRead: parser.recordsSeen, stored: stored)
                await progress?(done)
                let result = Result(
                    stored: stored, alreadyThere: alreadyThere, repeatedInFile: duplicates - alreadyThere,
                    skipped: Self.grouped(skipped),
                    invalid: .init(count: parser.invalidCount, examples: parser.invalidExamples),
                    timeZone: parser.timeZone, routes: routes)
                try await hooks.finish?(result, done, connection)
                return result
            }
        } catch {
            throw PostgresErrors.unwrapTransaction(error)
        }
    }

    /// Stores the workout routes of an export.zip as positions, on the import's transaction: each file is parsed
    /// whole (`GPXTrack`), and one that cannot be read refuses the import, naming the file and the line.
    /// Points without a time are not positions (Apple's always have one) and are left out.
    private func importRoutes(of reader: AppleHealthExportReader, userID: UUID, on connection: PostgresConnection, logger: Logger)
        async throws -> Result.Routes?
    {
        guard let archive = reader.archive else { return nil }
        var routes = Result.Routes(files: 0, stored: 0, alreadyThere: 0)
        for entry in archive.workoutRoutes {
            try Task.checkCancellation()
            let track: GPXTrack
            do {
                switch GPXTrack.parse(Data(try archive.routeBytes(entry))) {
                case .success(let parsed): track = parsed
                case .failure(let error): throw SampleError.importFailed("\(entry.path): \(error.message)")
                }
            } catch let error as AppleHealthImportError {
                throw SampleError.importFailed("\(entry.path): \(error.message)")
            }
            let positions = track.points.compactMap { point in
                point.time.map {
                    Position(at: $0, latitude: point.latitude, longitude: point.longitude, elevation: point.elevation, accuracy: point.accuracy)
                }
            }
            for start in stride(from: 0, to: positions.count, by: Self.batchSize) {
                let batch = Array(positions[start..<min(start + Self.batchSize, positions.count)])
                let (accepted, duplicates) = try await PositionStore.ingest(batch, for: userID, on: connection, logger: logger)
                routes.stored += accepted
                routes.alreadyThere += duplicates
            }
            routes.files += 1
        }
        return routes
    }

    /// The first sample of each (type, at) of `samples`, and the later ones.
    static func splitRepeats(_ samples: [Sample]) -> (distinct: [Sample], again: [Sample]) {
        struct Key: Hashable {
            var type: SampleType
            var at: Date
        }
        var seen = Set<Key>(minimumCapacity: samples.count)
        var distinct: [Sample] = []
        var again: [Sample] = []
        distinct.reserveCapacity(samples.count)
        for sample in samples {
            if seen.insert(Key(type: sample.type, at: sample.at)).inserted { distinct.append(sample) } else { again.append(sample) }
        }
        return (distinct, again)
    }

    /// By reason (in `AppleHealthSkipReason` order), then most frequent identifier first.
    static func grouped(_ skipped: [AppleHealthSkip: Int]) -> [Result.Skipped] {
        let order = Dictionary(uniqueKeysWithValues: AppleHealthSkipReason.allCases.enumerated().map { ($1, $0) })
        return skipped.sorted {
            (order[$0.key.reason]!, -$0.value, $0.key.identifier) < (order[$1.key.reason]!, -$1.value, $1.key.identifier)
        }.map { Result.Skipped(reason: $0.key.reason.rawValue, identifier: $0.key.identifier, count: $0.value) }
    }
}
