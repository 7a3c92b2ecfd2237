import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer
@testable import BrokerTooling

/// Imports larger than `IMPORT_BACKGROUND_BYTES` run as jobs: 202, a status URL to poll, then the same result
/// as a synchronous import, or the problem — still all or nothing.
@Suite("Apple Health import jobs", .serialized)
struct AppleHealthImportJobTests {
    /// Background imports for anything over 1 MiB, and lock waits long enough for a test to hold one.
    static let smallThreshold: @Sendable (inout BrokerConfiguration) -> Void = {
        $0.importBackgroundBytes = 1 << 20
        $0.database.lockTimeout = .seconds(120)
        $0.rateLimits.imports = nil
    }

    /// An export of about `bytes` bytes, written by the generator into a temporary directory (removed after `body`).
    static func withExport<T>(bytes: Int, seed: UInt64 = 3, _ body: (URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("export.xml")
        try AppleHealthExportGenerator.write(to: url, approximateBytes: bytes, seed: seed)
        return try await body(url)
    }

    /// POSTs a file streamed from disk by curl (so that the test process never holds it in memory).
    static func upload(_ harness: TestHarness, _ file: URL, contentType: String = "application/xml", token: String)
        async throws -> (status: Int, location: String?, body: [String: Any])
    {
        let port = try #require(harness.client.port)
        let run = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/curl"),
            [
                "-sS", "-i", "-X", "POST", "-T", file.path, "-H", "Content-Type: \(contentType)", "-H", "Authorization: Bearer \(token)",
                "-H", "Expect:", "http://127.0.0.1:\(port)/v1/me/imports/apple-health",
            ],
            timeout: .seconds(1800))
        let parts = run.output.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        let text = parts.dropFirst().joined(separator: "\r\n\r\n")
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        let location = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("location:") }
            .map { String($0.dropFirst("location:".count)).trimmingCharacters(in: .whitespaces) }
        let body = (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? ["raw": run.output]
        return (status, location, body)
    }

    /// Polls the job until it is no longer running (at most `limit`, a bound on a hang, not a timing assertion);
    /// returns the progress seen while it ran, and the final state.
    static func follow(
        _ harness: TestHarness, _ path: String, token: String, every pause: Duration = .milliseconds(100),
        limit: Duration = .seconds(1800)
    ) async throws -> (seen: [(bytes: Int, records: Int)], final: [String: Any]) {
        var seen: [(bytes: Int, records: Int)] = []
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let response = try await harness.request(.get, path, token: token)
            try #require(response.status == .ok, "\(path): \(response.status) \(harness.text(response)) \(response.headers)")
            let job = try harness.object(response)
            guard job["status"] as? String == "running" else { return (seen, job) }
            let observation = (bytes: job["bytesRead"] as? Int ?? -1, records: job["recordsRead"] as? Int ?? -1)
            if seen.last.map({ $0 != observation }) ?? true { seen.append(observation) }
            try await Task.sleep(for: pause)
        }
        throw TestSetupError("\(path) still running after \(limit)")
    }

    /// kB of `VmHWM` or `VmRSS` in /proc/self/status.
    static func memory(_ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
            .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") }
    }

    @Test("a 200 MB export runs as a job: progress grows while it runs, then the result equals a synchronous import's; peak memory is reported")
    func largeImport() async throws {
        try await Self.withExport(bytes: 200_000_000) { file in
            try await TestHarness.run { harness in
                let token = try await harness.activeUser()
                // The server runs in this process: its peak resident memory is this process's, from here on.
                let resetPeak = (try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)) != nil
                let before = Self.memory("VmRSS") ?? 0
                let started = try await Self.upload(harness, file, token: token)
                #expect(started.status == 202, "\(started.body)")
                let location = try #require(started.location)
                #expect(location == "/v1/me/imports/\(started.body["id"] as? String ?? "")")
                #expect(started.body["status"] as? String == "running")
                #expect(started.body["bytesTotal"] as? Int == Int(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as! UInt64))

                let (seen, job) = try await Self.follow(harness, location, token: token)
                let peak = Self.memory("VmHWM") ?? 0
                print(
                    "MEMORY 200 MB import: VmRSS before \(before) kB, VmHWM during \(peak) kB (peak reset: \(resetPeak)), file \(job["bytesTotal"] ?? 0) bytes, "
                        + "\((job["result"] as? [String: Any])?["stored"] ?? 0) samples stored, \(seen.count) progress observations")
                #expect(job["status"] as? String == "succeeded", "\(job)")
                #expect(seen.count >= 3, "only \(seen.count) distinct observations while running: \(seen)")
                // Bytes grow with every observation; records never fall, and grow over the run (a chunk may end
                // inside elements that are not records, such as the export's closing workouts and summaries).
                for (earlier, later) in zip(seen, seen.dropFirst()) {
                    #expect(later.bytes > earlier.bytes && later.records >= earlier.records, "\(seen)")
                }
                #expect(Set(seen.map(\.records)).count >= 3, "\(seen)")
                let result = try #require(job["result"] as? [String: Any])
                #expect(job["stored"] as? Int == result["stored"] as? Int)
                #expect(job["bytesRead"] as? Int == job["bytesTotal"] as? Int)
                let inDatabase = try await AppleHealthFixtures.storedSamples(harness)
                #expect(result["stored"] as? Int == inDatabase)

                // The same file imported synchronously (the code path of a small upload) for a fresh account.
                let fresh = try await harness.accountID(try await harness.activeUser(TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode())))
                let synchronous = try await TestDatabase.withClient(harness.databaseURL) { client in
                    try await AppleHealthImport(client: client).run(
                        file: file, format: .xml, userID: UUID(uuidString: fresh)!, logger: TestDatabase.logger)
                }
                let expected = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(synchronous)) as! [String: Any]
                #expect(NSDictionary(dictionary: result).isEqual(to: expected), "job \(result) ≠ synchronous \(expected)")
            }
        }
    }

    @Test("a job whose file turns out bad ends failed and stores nothing; others cannot see it; a good one succeeds")
    func badFileJob() async throws {
        try await Self.withExport(bytes: 3_000_000) { file in
            let bytes = try [UInt8](Data(contentsOf: file))
            try await TestHarness.run(configure: Self.smallThreshold) { harness in
                let token = try await harness.activeUser()
                let truncated = Array(bytes.dropLast(200))
                let response = try await AppleHealthFixtures.post(harness, truncated, contentType: "application/xml", token: token)
                #expect(response.status == .accepted, "\(harness.text(response))")
                let location = try #require(response.headers[.location])
                let (_, job) = try await Self.follow(harness, location, token: token)
                #expect(job["status"] as? String == "failed")
                #expect(job["stored"] as? Int == 0)
                let problem = try #require(job["problem"] as? [String: Any])
                #expect((problem["detail"] as? String)?.contains("truncated") == true, "\(problem)")
                #expect(problem["status"] as? Int == 422)
                #expect(try await AppleHealthFixtures.storedSamples(harness) == 0)

                // Someone else: the same 404 as an id that does not exist.
                let other = try await harness.activeUser(TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode()))
                let foreign = try await harness.request(.get, location, token: other)
                #expect(foreign.status == .notFound)
                let unknown = try await harness.request(.get, "/v1/me/imports/\(UUID().uuidString.lowercased())", token: other)
                #expect(harness.text(foreign) == harness.text(unknown))

                let good = try await AppleHealthFixtures.post(harness, bytes, contentType: "application/xml", token: token)
                #expect(good.status == .accepted)
                let (_, done) = try await Self.follow(harness, try #require(good.headers[.location]), token: token)
                #expect(done["status"] as? String == "succeeded", "\(done)")
                let stored = (done["result"] as? [String: Any])?["stored"] as? Int
                let inDatabase = try await AppleHealthFixtures.storedSamples(harness)
                #expect(stored != nil && stored == inDatabase)
            }
        }
    }

    @Test("background slots are bounded: while the one slot's job runs, another person's large import is 503 with Retry-After")
    func backgroundSlotsAreBounded() async throws {
        try await Self.withExport(bytes: 3_000_000) { file in
            let bytes = try [UInt8](Data(contentsOf: file))
            // One slot (the tests' pool of 3 allows a quarter of it, at least one), and a lock timeout longer than
            // the test, so the first job waits for its person's row as long as the test holds it.
            try await TestHarness.run(configure: {
                Self.smallThreshold(&$0)
                $0.database.lockTimeout = .seconds(300)
            }) { harness in
                let first = try await harness.activeUser(TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode()))
                let second = try await harness.activeUser(TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode()))
                let firstID = try #require(UUID(uuidString: try await harness.accountID(first)))
                _ = try await harness.sql("INSERT INTO sample_arrivals (user_id) VALUES ('\(firstID)')")
                let location = try await TestDatabase.withClient(harness.databaseURL) { client in
                    try await client.withTransaction(logger: TestDatabase.logger) { connection in
                        try await connection.query("SET LOCAL idle_in_transaction_session_timeout = 0", logger: TestDatabase.logger)
                        try await connection.query(
                            "SELECT 1 FROM sample_arrivals WHERE user_id = \(firstID) FOR UPDATE", logger: TestDatabase.logger)
                        let started = try await AppleHealthFixtures.post(harness, bytes, contentType: "application/xml", token: first)
                        #expect(started.status == .accepted, "\(harness.text(started))")
                        let refused = try await AppleHealthFixtures.post(harness, bytes, contentType: "application/xml", token: second)
                        #expect(refused.status == .serviceUnavailable, "\(harness.text(refused))")
                        #expect(refused.headers[.retryAfter] != nil)
                        #expect(try harness.object(refused)["type"] as? String == "https://data4help.example/problems/server-busy")
                        return try #require(started.headers[.location])
                    }
                }
                // Released: the first job completes, and its slot serves the second person.
                let (_, done) = try await Self.follow(harness, location, token: first)
                #expect(done["status"] as? String == "succeeded", "\(done)")
                let later = try await AppleHealthFixtures.post(harness, bytes, contentType: "application/xml", token: second)
                #expect(later.status == .accepted, "\(harness.text(later))")
                let (_, secondDone) = try await Self.follow(harness, try #require(later.headers[.location]), token: second)
                #expect(secondDone["status"] as? String == "succeeded", "\(secondDone)")
                #expect(try await harness.int("SELECT count(*) FROM import_jobs WHERE status = 'succeeded'") == 2)
            }
        }
    }

    @Test("one import per person: while a job runs, another import is 409; the console shows a progress bar, then the result")
    func onePerPerson() async throws {
        try await Self.withExport(bytes: 3_000_000) { file in
            let bytes = try [UInt8](Data(contentsOf: file))
            try await TestHarness.run(configure: Self.smallThreshold) { harness in
                let person = TestHarness.Person()
                let token = try await harness.activeUser(person)
                let id = try await harness.accountID(token)
                _ = try await harness.sql("INSERT INTO sample_arrivals (user_id) VALUES ('\(id)')")
                let browser = ConsoleBrowser(harness)
                _ = try await browser.logIn(person.email, person.password)
                try await browser.get("/data")
                let csrf = try #require(
                    browser.lastPage.range(of: #"data-csrf=""#).map {
                        String(browser.lastPage[$0.upperBound...].prefix { $0 != "\"" })
                    })
                // Holding the person's arrival row keeps the job waiting at its first batch, so it is running for sure.
                let page = try await TestDatabase.withClient(harness.databaseURL) { client in
                    try await client.withTransaction(logger: TestDatabase.logger) { connection in
                        try await connection.query(
                            "SELECT 1 FROM sample_arrivals WHERE user_id = \(UUID(uuidString: id)!) FOR UPDATE",
                            logger: TestDatabase.logger)
                        let started = try await browser.send(
                            .post, "/data/upload?kind=apple-health-xml", body: ByteBuffer(bytes: bytes), headers: [Console.csrfHeader: csrf])
                        #expect(started.status == .accepted, "\(harness.text(started))")
                        let location = try #require(try harness.object(started)["location"] as? String)
                        #expect(location.hasPrefix("/data/imports/"))

                        let second = try await AppleHealthFixtures.post(
                            harness, AppleHealthFixtures.exportXML, contentType: "application/xml", token: token)
                        #expect(second.status == .conflict, "\(harness.text(second))")
                        #expect(harness.text(second).contains("still running"))

                        try await browser.get(location)
                        #expect(browser.lastPage.contains("<progress"), "\(browser.lastPage)")
                        #expect(browser.lastPage.contains(#"<meta http-equiv="refresh" content="1">"#))
                        return location
                    }
                }
                // Released: the page is followed as a browser would (it reloads itself) until it shows the result.
                let deadline = ContinuousClock.now + .seconds(600)
                while ContinuousClock.now < deadline {
                    try await browser.get(page)
                    if !browser.lastPage.contains("http-equiv=\"refresh\"") { break }
                    try await Task.sleep(for: .milliseconds(200))
                }
                #expect(browser.lastPage.contains(#"id="import-stored""#), "\(browser.lastPage)")
                #expect(browser.lastPage.contains("Europe/Rome"))
            }
        }
    }

    @Test("a job the server was running when it died is reported failed by the next server; the person may import again")
    func restart() async throws {
        try await TestHarness.run(configure: Self.smallThreshold) { harness in
            let token = try await harness.activeUser()
            let id = try await harness.accountID(token)
            // What a killed server leaves: a running row that no transaction holds.
            let rows = try await harness.sql(
                "INSERT INTO import_jobs (id, user_id, bytes_total) VALUES (gen_random_uuid(), '\(id)', 12345) RETURNING id::text")
            let job = try #require(try rows.first?.decode(String.self))
            try await TestHarness.run(databaseURL: harness.databaseURL, configure: Self.smallThreshold) { restarted in
                let (_, final) = try await Self.follow(restarted, "/v1/me/imports/\(job)", token: token)
                #expect(final["status"] as? String == "failed")
                #expect((final["problem"] as? [String: Any])?["detail"] as? String == ImportJobs.restartedDetail)
                let again = try await AppleHealthFixtures.post(
                    restarted, AppleHealthFixtures.exportXML, contentType: "application/xml", token: token)
                #expect(again.status == .ok, "\(restarted.text(again))")
            }
        }
    }

    @Test("`d4h import apple-health` reports progress on standard error, then the result")
    func commandLineProgress() async throws {
        try await Self.withExport(bytes: 3_000_000) { file in
            try await TestHarness.run { harness in
                let person = TestHarness.Person()
                try await harness.activeUser(person)
                let run = try await D4HCommand.run(
                    ["import", "apple-health", "--email", person.email, file.path], environment: ["DATABASE_URL": harness.databaseURL.text])
                #expect(run.status == 0, "\(run.output)")
                // Not a terminal: whole lines, the first at once and the last at 100 %.
                #expect(run.output.contains("Read 0.0 MB of 3.0 MB (0 %), 0 records, 0 samples stored\n"), "\(run.output)")
                let last = try #require(run.output.split(separator: "\n").last { $0.hasPrefix("Read ") })
                #expect(last.hasPrefix("Read 3.0 MB of 3.0 MB (100 %)"), "\(last)")
                let stored = try await AppleHealthFixtures.storedSamples(harness)
                #expect(last.hasSuffix(", \(stored) samples stored"), "\(last)")
                #expect(run.output.contains("Imported \(stored) new samples"))
                #expect(run.output.contains("Time zone in the export: Europe/Rome"))
                #expect(!run.output.contains("\r"))
            }
        }
    }
}
