import ArgumentParser
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation
import Logging
import PostgresNIO

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Bench {
    struct Ingest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Samples per second through POST /v1/me/samples (JSON and CSV) against raw `psql \\copy` of as many rows into the same table.")

        @Option(help: "The server to measure.") var url = "http://127.0.0.1:8080"
        @Option(help: "The server's database (to create the bench people and run the psql baseline).") var databaseURL: String
        @Option(help: "Concurrent clients, one person each.") var clients = 4
        @Option(help: "Batches per client and body format.") var batches = 10
        @Option(help: "Samples per batch.") var batchSize = 10_000

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let people = try await withDatabase(url: databaseURL, logger: logger) { client in
                try await BenchPeople.create(count: clients, client: client, logger: logger)
            }
            let session = URLSession(configuration: .ephemeral)
            let tokens = try await people.asyncMap { try await BenchPeople.logIn($0, url: url, session: session) }
            let perFormat = clients * batches * batchSize

            let json = try await upload(tokens: tokens, session: session, offset: 0, format: "json")
            let csv = try await upload(tokens: tokens, session: session, offset: batches, format: "csv")
            let copy = try await rawCopy(rows: perFormat)

            print("## Ingest (\(clients) clients × \(batches) batches × \(batchSize) samples per format)")
            print("| path | samples | seconds | samples/s | ratio to raw COPY |")
            print("|---|---:|---:|---:|---:|")
            for (name, seconds) in [
                ("POST /v1/me/samples, JSON", json), ("POST /v1/me/samples, CSV", csv), ("psql \\copy into samples (baseline)", copy),
            ] {
                let rate = Double(perFormat) / seconds
                print("| \(name) | \(perFormat) | \(String(format: "%.2f", seconds)) | \(Int(rate)) | \(String(format: "%.2f", copy / seconds)) |")
            }
        }

        /// Each client posts its batches one after another; clients run at once. Returns the wall time.
        func upload(tokens: [String], session: URLSession, offset: Int, format: String) async throws -> Double {
            let endpoint = URL(string: url)!.appendingPathComponent("v1/me/samples")
            // Bodies are built before the clock starts: the benchmark measures the server, not this tool.
            let bodies: [[Data]] = (0..<tokens.count).map { _ in
                (0..<batches).map { body(batch: offset + $0, format: format) }
            }
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (token, clientBodies) in zip(tokens, bodies) {
                    group.addTask {
                        for body in clientBodies {
                            var request = URLRequest(url: endpoint)
                            request.httpMethod = "POST"
                            request.setValue(format == "csv" ? "text/csv" : "application/json", forHTTPHeaderField: "Content-Type")
                            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
                            request.httpBody = body
                            let (data, response) = try await session.data(for: request)
                            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                            try BenchIngestResult.check(data, status: status, accepted: batchSize)
                        }
                    }
                }
                try await group.waitForAll()
            }
            return seconds(since: start)
        }

        /// Heart-rate readings one second apart; batch `n` starts where batch `n - 1` ended, so none is a duplicate.
        func body(batch: Int, format: String) -> Data {
            let start = Date(timeIntervalSince1970: 1_700_000_000 + Double(batch * batchSize))
            var text = format == "csv" ? "type,value,at\n" : "{\"samples\":["
            for index in 0..<batchSize {
                let at = Timestamp.rfc3339(start.addingTimeInterval(Double(index)))
                let value = 60 + Double(index % 400) / 10
                if format == "csv" {
                    text += "heart_rate,\(value),\(at)\n"
                } else {
                    text += "\(index == 0 ? "" : ","){\"type\":\"heart_rate\",\"value\":\(value),\"at\":\"\(at)\"}"
                }
            }
            if format == "json" { text += "]}" }
            return Data(text.utf8)
        }

        /// `psql \copy` of `rows` rows for a fresh person straight into `samples`: the floor of what ingest costs.
        func rawCopy(rows: Int) async throws -> Double {
            let logger = makeLogger(level: .warning)
            let person = try await withDatabase(url: databaseURL, logger: logger) { client in
                try await BenchPeople.create(count: 1, client: client, logger: logger, prefix: "copy")[0]
            }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-bench-copy-\(UUID().uuidString).tsv")
            defer { try? FileManager.default.removeItem(at: file) }
            var text = ""
            text.reserveCapacity(rows * 70)
            let start = Date(timeIntervalSince1970: 1_700_000_000)
            for index in 0..<rows {
                text +=
                    "\(person.id.uuidString.lowercased())\t1\t\(Timestamp.postgresText(start.addingTimeInterval(Double(index))))\t\(60 + Double(index % 400) / 10)\t\(index + 1)\n"
            }
            try Data(text.utf8).write(to: file)
            let database = try DatabaseURL(databaseURL)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "psql", "-q", "-v", "ON_ERROR_STOP=1", "-h", database.host, "-p", String(database.port), "-U", database.username,
                "-d", database.database, "-c", "\\copy samples (user_id, type, at, value, arrival) FROM '\(file.path)'",
            ]
            process.environment = ProcessInfo.processInfo.environment.merging(["PGPASSWORD": database.password ?? ""]) { $1 }
            let clock = ContinuousClock.now
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw ValidationError("psql \\copy failed") }
            return seconds(since: clock)
        }

        func seconds(since start: ContinuousClock.Instant) -> Double {
            let elapsed = ContinuousClock.now - start
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
    }
}

/// The answer to an upload (openapi.yaml `IngestResult`), decoded rather than matched as text: the
/// server's JSON layout is its own to change.
struct BenchIngestResult: Decodable {
    var accepted: Int
    var duplicates: Int

    /// Throws unless `data` is a 200's `IngestResult` that stored all `accepted` samples, none a duplicate.
    static func check(_ data: some Collection<UInt8>, status: Int, accepted: Int) throws {
        let body = Data(data)
        guard status == 200 else { throw ValidationError("upload answered \(status): \(String(decoding: body.prefix(300), as: UTF8.self))") }
        let result: BenchIngestResult
        do { result = try JSONDecoder().decode(BenchIngestResult.self, from: body) } catch {
            throw ValidationError("upload answered 200 without an IngestResult (\(error)): \(String(decoding: body.prefix(300), as: UTF8.self))")
        }
        guard result.accepted == accepted, result.duplicates == 0 else {
            throw ValidationError("upload stored \(result.accepted) samples (\(result.duplicates) duplicates), expected \(accepted) new ones")
        }
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async throws -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
