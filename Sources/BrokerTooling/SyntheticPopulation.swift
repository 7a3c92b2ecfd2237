import BrokerDomain
import BrokerTestSupport
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// A deterministic synthetic population for demos, tests and benchmarks: `people` people with `days` days of
/// health data ending on `endDay`, identical for the same seed, written with COPY.
///
/// Person `n` depends only on `(seed, n)` (and the window), never on batching, so a run that stopped half-way is
/// completed by running it again: people already there are skipped.
package struct SyntheticPopulation: Sendable {
    package var people: Int
    package var days: Int
    package var seed: UInt64
    /// The last day with data (UTC).
    package var endDay: CalendarDate
    /// People per transaction; nil picks about 100,000 samples' worth.
    package var peoplePerBatch: Int?
    /// Batches stored at the same time, each on its own connection.
    package var connections: Int

    /// `endDay` defaults to yesterday (UTC), the last whole day: a population ending today would hold readings from
    /// later today, that is, from the future, and two runs on the same day would not be identical.
    package init(
        people: Int, days: Int = 30, seed: UInt64 = 1, endDay: CalendarDate? = nil, peoplePerBatch: Int? = nil,
        connections: Int = 2
    ) {
        self.people = people
        self.days = days
        self.seed = seed
        self.endDay = endDay ?? CalendarDate(dayNumber: CalendarDate.today.dayNumber - 1)!
        self.peoplePerBatch = peoplePerBatch
        self.connections = connections
    }

    /// How far a `write` has come; reported after each committed batch.
    package struct Progress: Sendable {
        /// People of the population now in the database (those already there included).
        package var people: Int
        package var total: Int
        /// Samples written by this run.
        package var samples: Int
        /// Seconds since this run started.
        package var seconds: Double

        package var samplesPerSecond: Double { seconds > 0 ? Double(samples) / seconds : 0 }
    }

    /// What a `write` did.
    package struct Summary: Sendable {
        package var people: Int
        /// People of `0..<people` that existed before this run and were left alone.
        package var alreadyPresent: Int
        package var written: Int
        package var samples: Int
        package var rollups: Int
        package var seconds: Double

        package var samplesPerSecond: Double { seconds > 0 ? Double(samples) / seconds : 0 }
    }

    /// The first day with data (UTC).
    package var firstDay: CalendarDate {
        CalendarDate(dayNumber: endDay.dayNumber - days + 1)!
    }

    /// The email of person `number`; every person of the population has one of this form.
    package func email(ofPerson number: Int) -> String {
        SyntheticPerson.email(seed: seed, number: number)
    }

    /// Writes every person of `0..<people` that is not in the database yet, one transaction per batch.
    package func write(
        client: DatabasePool, progress: @escaping @Sendable (Progress) -> Void = { _ in }, logger: Logger
    ) async throws -> Summary {
        try validate()
        let clock = ContinuousClock()
        let start = clock.now
        func seconds() -> Double {
            let elapsed = clock.now - start
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        }

        let present = try await presentPeople(client: client, logger: logger)
        let missing = (0..<people).filter { !present.contains($0) }
        var summary = Summary(
            people: people, alreadyPresent: people - missing.count, written: 0, samples: 0, rollups: 0, seconds: 0)
        guard !missing.isEmpty else {
            summary.seconds = seconds()
            return summary
        }
        try await ensurePartitions(client: client, logger: logger)

        let batchSize = peoplePerBatch ?? max(1, min(1_000, 100_000 / (31 * days)))
        let batches = stride(from: 0, to: missing.count, by: batchSize).map {
            Array(missing[$0..<min($0 + batchSize, missing.count)])
        }
        // Each writer generates a batch (Swift) and then stores it (PostgreSQL, one backend per connection), so
        // with two writers one generates while the other stores, and both cores work; COPY into tables with
        // foreign keys and indexes is bound by the backend's CPU, not by the client.
        let state = SharedProgress(summary)
        let population = self
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<max(1, min(connections, batches.count)) {
                group.addTask {
                    while true {
                        let index = state.shared.withLock { state in
                            defer { state.next += 1 }
                            return state.next
                        }
                        guard index < batches.count else { return }
                        let batch = population.makeBatch(batches[index])
                        try await population.store(batch, client: client, logger: logger)
                        let done = state.shared.withLock { state in
                            state.summary.written += batch.people
                            state.summary.samples += batch.sampleCount
                            state.summary.rollups += batch.rollupCount
                            return state.summary
                        }
                        progress(
                            Progress(
                                people: done.alreadyPresent + done.written, total: population.people, samples: done.samples,
                                seconds: seconds()))
                    }
                }
            }
            try await group.waitForAll()
        }
        summary = state.shared.withLock { $0.summary }
        summary.seconds = seconds()
        logger.info(
            "synthetic population written",
            metadata: ["seed": "\(seed)", "people": "\(summary.written)", "samples": "\(summary.samples)"])
        return summary
    }

    /// Deletes every person of this seed's population (whatever their number), with all their data; returns how many.
    package func delete(client: DatabasePool, logger: Logger) async throws -> Int {
        try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                "DELETE FROM accounts WHERE email LIKE \(SyntheticPerson.emailPattern(seed: seed)) RETURNING 1",
                logger: logger)
            var deleted = 0
            for try await _ in rows { deleted += 1 }
            if deleted > 0 {
                try await AuditLog.append(
                    AuditEvent(
                        actorID: nil, actorRole: "operator", action: AuditAction.populationRemoved,
                        details: ["seed": .string(String(seed)), "people": .int(deleted)]),
                    on: connection, logger: logger)
            }
            return deleted
        }
    }

    // MARK: - Steps

    private func validate() throws {
        guard people >= 0, people < SyntheticFiscalCode.serialCount else {
            throw SyntheticPopulationError.invalid("people must be between 0 and \(SyntheticFiscalCode.serialCount - 1)")
        }
        guard (1...36_500).contains(days) else { throw SyntheticPopulationError.invalid("days must be between 1 and 36500") }
        guard CalendarDate(dayNumber: endDay.dayNumber - days - 91 * 366) != nil else {
            throw SyntheticPopulationError.invalid("the window and birth dates must fall in years 1–9999")
        }
    }

    /// Numbers of the people of this seed already in the database.
    private func presentPeople(client: DatabasePool, logger: Logger) async throws -> Set<Int> {
        let rows = try await client.query(
            "SELECT email FROM accounts WHERE email LIKE \(SyntheticPerson.emailPattern(seed: seed))", logger: logger)
        var numbers = Set<Int>()
        for try await email in rows.decode(String.self) {
            if let number = SyntheticPerson.number(inEmail: email, seed: seed) { numbers.insert(number) }
        }
        return numbers
    }

    /// Monthly partitions for the window, so the samples land in them rather than in the default partition.
    private func ensurePartitions(client: DatabasePool, logger: Logger) async throws {
        let first = firstDay.description
        let last = endDay.description
        try await client.query(
            """
            SELECT ensure_samples_partition(month::date)
            FROM generate_series(date_trunc('month', \(first)::date), \(last)::date, interval '1 month') AS month
            """, logger: logger)
    }

    /// The COPY text of one batch of people; pure computation, run off the database's path.
    private func makeBatch(_ numbers: [Int]) -> SyntheticBatch {
        let createdAt = firstDay
        let generator = SyntheticSamples(seed: seed, firstDay: firstDay.dayNumber, days: days)
        let accounts = CopyTextChunks()
        let users = CopyTextChunks()
        let arrivals = CopyTextChunks()
        let samples = CopyTextChunks()
        let rollups = CopyTextChunks()
        var batch = SyntheticBatch(people: numbers.count)

        for number in numbers {
            let person = SyntheticPerson(seed: seed, number: number, lastDay: endDay.dayNumber)
            let id = person.id.uuidString.lowercased()
            // No password hash: the login path treats a null hash as "no password", so nobody can log in as them.
            accounts.put(text: id)
            accounts.tab()
            accounts.put(text: "user")
            accounts.tab()
            accounts.put(text: person.email)
            accounts.tab()
            accounts.null()
            accounts.tab()
            accounts.put(text: "active")
            accounts.tab()
            accounts.put(date: createdAt, secondOfDay: 0)
            accounts.tab()
            accounts.put(date: createdAt, secondOfDay: 0)
            accounts.endRow()

            users.put(text: id)
            users.tab()
            users.put(text: person.fiscalCode)
            users.tab()
            users.put(text: person.fullName)
            users.tab()
            users.put(date: person.birthDate)
            users.tab()
            users.put(text: person.sex.rawValue)
            users.endRow()

            let written = generator.write(person, samples: samples, rollups: rollups)
            batch.sampleCount += written.samples
            batch.rollupCount += written.rollups
            arrivals.put(text: id)
            arrivals.tab()
            arrivals.put(decimal: written.samples)
            arrivals.endRow()
        }
        batch.accounts = accounts.finish()
        batch.users = users.finish()
        batch.samples = samples.finish()
        batch.rollups = rollups.finish()
        batch.arrivals = arrivals.finish()
        batch.first = numbers.first ?? 0
        return batch
    }

    /// One transaction per batch: a batch's people appear with all their data, or not at all.
    private func store(_ batch: SyntheticBatch, client: DatabasePool, logger: Logger) async throws {
        try await client.withTransaction(logger: logger) { connection in
            // Losing the last commits in a crash is harmless here (a rerun writes whoever is missing), and not
            // waiting for each WAL flush keeps batches back to back.
            try await connection.query("SET LOCAL synchronous_commit = off", logger: logger)
            try await Self.copy(
                batch.accounts, into: "accounts",
                columns: ["id", "role", "email", "password_hash", "status", "created_at", "activated_at"],
                on: connection, logger: logger)
            try await Self.copy(
                batch.users, into: "users",
                columns: ["account_id", "fiscal_code", "full_name", "birth_date", "sex"],
                on: connection, logger: logger)
            try await Self.copy(
                batch.samples, into: "samples", columns: ["user_id", "type", "at", "value", "arrival"],
                on: connection, logger: logger)
            try await Self.copy(
                batch.rollups, into: "daily_rollups",
                columns: ["user_id", "type", "day", "count", "sum", "sum_squares", "min", "max"],
                on: connection, logger: logger)
            try await Self.copy(
                batch.arrivals, into: "sample_arrivals", columns: ["user_id", "last_arrival"],
                on: connection, logger: logger)
            // One audit record per batch, not a sign-up per person: the log shows that, and from which seed, people
            // were generated rather than registered.
            try await AuditLog.append(
                AuditEvent(
                    actorID: nil, actorRole: "operator", action: AuditAction.populationSeeded,
                    details: [
                        "seed": .string(String(seed)), "firstPerson": .int(batch.first), "people": .int(batch.people),
                        "samples": .int(batch.sampleCount),
                    ]),
                on: connection, logger: logger)
        }
    }

    private static func copy(
        _ chunks: [ByteBuffer], into table: String, columns: [String], on connection: PostgresConnection, logger: Logger
    ) async throws {
        guard !chunks.isEmpty else { return }
        try await connection.copyFrom(table: table, columns: columns, format: .text(.init()), logger: logger) { writer in
            for chunk in chunks { try await writer.write(chunk) }
        }
    }
}

/// The next batch to take and the running totals, shared by the writers.
private final class SharedProgress: Sendable {
    let shared: Mutex<(next: Int, summary: SyntheticPopulation.Summary)>

    init(_ summary: SyntheticPopulation.Summary) {
        shared = Mutex((next: 0, summary: summary))
    }
}

extension AuditAction {
    package static let populationSeeded = "population.seeded"
    package static let populationRemoved = "population.removed"
}
