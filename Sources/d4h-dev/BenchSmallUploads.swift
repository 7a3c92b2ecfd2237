import ArgumentParser
import AsyncHTTPClient
import BrokerDomain
import BrokerTooling
import CommandLineSupport
import Foundation
import Logging
import NIOCore

extension Bench {
    struct SmallUploads: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "small-uploads",
            abstract: """
                Uploads of a few samples each (a phone's), as fast as `clients` phones can send them, against `pgbench` writing \
                the same rows with the same number of clients: the inserts and the arrival update, one transaction each.
                """)

        @Option(help: "The server to measure.") var url = "http://127.0.0.1:8080"
        @Option(help: "The server's database (to make the people, and for pgbench).") var databaseURL: String
        @Option(help: "Concurrent clients, one person each, for the server and for pgbench alike.") var clients = 32
        @Option(help: "Seconds each measurement lasts.") var seconds = 15
        @Option(help: "Samples per upload, comma-separated: one measurement (and one pgbench run) each.") var sizes = "1,5"
        @Option(help: "pgbench (the cluster's own, or on PATH).") var pgbench = "pgbench"

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let sizes = self.sizes.split(separator: ",").compactMap { Int($0) }
            guard !sizes.isEmpty, sizes.allSatisfy({ (1...1000).contains($0) }), clients > 0, seconds > 0 else {
                throw ValidationError("--sizes takes numbers from 1 to 1000; --clients and --seconds must be positive")
            }
            // People for the server, and others for pgbench: each side's rows and arrival numbers are its own.
            let (people, baselinePeople) = try await withDatabase(url: databaseURL, logger: logger) { client in
                (
                    try await BenchPeople.create(count: clients, client: client, logger: logger, prefix: "small"),
                    try await BenchPeople.create(count: clients, client: client, logger: logger, prefix: "pgbench")
                )
            }
            var rows: [(size: Int, server: Measurement, baseline: Double)] = []
            try await HTTPClient.withHTTPClient(
                eventLoopGroup: HTTPClient.defaultEventLoopGroup,
                configuration: .init(connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: clients))
            ) { http in
                let api = BenchAPI(http: http, base: url)
                var tokens: [String] = []
                for person in people { tokens.append(try await api.logIn(email: person.email, password: person.password)) }
                // pgbench updates each of its people's arrival row, which a person's first upload makes: one each.
                for person in baselinePeople {
                    let token = try await api.logIn(email: person.email, password: person.password)
                    let at = Timestamp.rfc3339(Date().addingTimeInterval(-86_400))
                    try await api.send(
                        .POST, "/v1/me/samples", token: token, body: #"{"samples":[{"type":"step_count","value":1,"at":"\#(at)"}]}"#, expecting: 200)
                }
                for (round, size) in sizes.enumerated() {
                    let server = try await upload(http: http, tokens: tokens, size: size, round: round)
                    let baseline = try await runPGBench(people: baselinePeople, size: size)
                    rows.append((size, server, baseline))
                }
            }
            print("## Small uploads (\(clients) clients, one person each, each sending its next upload when the last is answered; \(seconds) s each)")
            print("| path | samples per upload | uploads/s | samples/s | p50 ms | p99 ms | ratio to pgbench |")
            print("|---|---:|---:|---:|---:|---:|---:|")
            for row in rows {
                let rate = row.server.rate
                print(
                    "| POST /v1/me/samples | \(row.size) | \(Int(rate)) | \(Int(rate * Double(row.size))) | "
                        + "\(ms(row.server.p50)) | \(ms(row.server.p99)) | \(String(format: "%.2f", rate / row.baseline)) |")
                print(
                    "| pgbench: \(row.size) insert\(row.size == 1 ? "" : "s") + the arrival update per transaction (baseline) | \(row.size) | "
                        + "\(Int(row.baseline)) | \(Int(row.baseline * Double(row.size))) | | | 1.00 |")
            }
        }

        struct Measurement {
            var rate: Double
            var p50: Double
            var p99: Double
        }

        /// Every client posts `size` heart-rate readings, waits for the answer (which must have stored all of
        /// them), and posts again, for `seconds` seconds. Readings are a second apart and never repeat.
        func upload(http: HTTPClient, tokens: [String], size: Int, round: Int) async throws -> Measurement {
            let start = ContinuousClock.now
            let end = start + .seconds(seconds)
            // Each round's readings start a day after the last round's; all lie in the last 30 days.
            let first = Date().addingTimeInterval(-30 * 86_400 + Double(round) * 86_400).timeIntervalSince1970.rounded()
            let url = self.url
            // Each client's latencies, gathered when all are done.
            var latencies: [Double] = []
            try await withThrowingTaskGroup(of: [Double].self) { group in
                for token in tokens {
                    group.addTask {
                        var next = 0
                        var mine: [Double] = []
                        while ContinuousClock.now < end {
                            let samples = (0..<size).map { index in
                                let at = Timestamp.rfc3339(Date(timeIntervalSince1970: first + Double(next + index)))
                                return #"{"type":"heart_rate","value":\#(60 + (next + index) % 40),"at":"\#(at)"}"#
                            }
                            next += size
                            var request = HTTPClientRequest(url: url + "/v1/me/samples")
                            request.method = .POST
                            request.headers.add(name: "Content-Type", value: "application/json")
                            request.headers.add(name: "Authorization", value: "Bearer \(token)")
                            request.body = .bytes(ByteBuffer(string: #"{"samples":["# + samples.joined(separator: ",") + "]}"))
                            let sent = ContinuousClock.now
                            let response = try await http.execute(request, timeout: .seconds(30))
                            let body = try await response.body.collect(upTo: 1 << 16)
                            try BenchIngestResult.check(body.readableBytesView, status: Int(response.status.code), accepted: size)
                            mine.append(Runs.seconds(since: sent))
                        }
                        return mine
                    }
                }
                for try await mine in group { latencies += mine }
            }
            let wall = Runs.seconds(since: start)
            let sorted = latencies.sorted()
            return Measurement(rate: Double(sorted.count) / wall, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99))
        }

        /// `pgbench` with one client per person (one process each, the person given by `-D`), each transaction
        /// taking `size` arrival numbers and inserting `size` samples, as an upload must at the least. Prepared
        /// statements: the fastest a client can send them. Returns the transactions per second of all clients.
        func runPGBench(people: [BenchPeople.Person], size: Int) async throws -> Double {
            let values = (1...size).map { index in
                "(:uid::uuid, 1, timestamptz '2026-01-01' + (:last - \(size - index)) * interval '1 millisecond', \(60 + index), :last - \(size - index))"
            }
            let script = """
                BEGIN;
                UPDATE sample_arrivals SET last_arrival = last_arrival + \(size) WHERE user_id = :uid::uuid RETURNING last_arrival AS last \\gset
                INSERT INTO samples (user_id, type, at, value, arrival) VALUES \(values.joined(separator: ", "));
                COMMIT;

                """
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-bench-small-\(UUID().uuidString).sql")
            try Data(script.utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let database = try DatabaseURL(databaseURL)
            let processes = try people.map { person in
                let process = Process()
                // Through Python, to clear the signal mask this process's threads block and a spawned child
                // inherits: pgbench's `-T` ends on SIGALRM, and with it blocked pgbench never stopped.
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = [
                    "python3", "-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execvp(sys.argv[1], sys.argv[1:])",
                    pgbench, "-n", "-M", "prepared", "-h", database.host, "-p", String(database.port), "-U", database.username,
                    "-d", database.database, "-c", "1", "-T", String(seconds), "-D", "uid=\(person.id.uuidString.lowercased())",
                    "-f", file.path,
                ]
                process.environment = ProcessInfo.processInfo.environment.merging(["PGPASSWORD": database.password ?? ""]) { $1 }
                let output = Pipe()
                process.standardOutput = output
                process.standardError = output
                try process.run()
                return (process, output)
            }
            var total = 0.0
            for (process, output) in processes {
                let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                // "tps = 2018.685542 (without initial connection time)"
                guard process.terminationStatus == 0,
                    let line = text.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
                    let tps = Double(line.dropFirst(6).prefix { $0 != " " })
                else { throw ValidationError("pgbench failed: \(text.suffix(600))") }
                total += tps
            }
            return total
        }

        private func quantile(_ sorted: [Double], _ q: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]
        }

        private func ms(_ seconds: Double) -> String { String(format: "%.1f", seconds * 1000) }
    }
}
