import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// FHIR bulk export (issue 31, item 3): the IG's kick-off, polling and manifest, files streamed through the
/// downloads' release rules, `_since` exactly once, expiry, and the HAPI bugs (#3987, #3400: exports that
/// ignored filters and permissions) as attacks. The test servers run without the planner's loop: a test
/// plans with a planner of its own (`plan`), so it sees the export while it is planning, with no timing.
@Suite("FHIR bulk export", .serialized)
struct BulkExportTests {
    /// One released sample as the tests compare them: the Observation's code, its time and its value.
    struct Line: Hashable, CustomStringConvertible {
        var code: String
        var at: Date
        var value: Double
        var description: String { "\(code)@\(Timestamp.rfc3339(at))=\(value)" }
    }

    /// A server without the planner's loop.
    static func run(
        configure: @escaping @Sendable (inout BrokerConfiguration) -> Void = { _ in }, _ body: @Sendable (TestHarness) async throws -> Void
    )
        async throws
    {
        try await TestHarness.run(
            configure: {
                $0.bulkExportPlanningInterval = nil
                configure(&$0)
            }, body)
    }

    /// Plans `files` waiting files (all of them when nil), as the server's loop would.
    static func plan(_ harness: TestHarness, files: Int? = nil, clock: WallClock = .system) async throws {
        try await TestDatabase.withClient(harness.databaseURL) { pool in
            let planner = BulkExportPlanner(client: pool, interval: nil, clock: clock, logger: TestDatabase.logger)
            if let files {
                for _ in 0..<files { try #require(try await planner.planNextFile()) }
            } else {
                try await planner.planAll()
            }
        }
    }

    /// Kicks off an export; returns the response and the status URL's path.
    static func kickOff(_ harness: TestHarness, _ query: String = "", token: String, method: HTTPRequest.Method = .get) async throws
        -> (response: TestResponse, statusPath: String?)
    {
        let response = try await harness.request(
            method, "/v1/fhir/$export\(query)", token: token, headers: [.accept: "application/fhir+json", HTTPField.Name("Prefer")!: "respond-async"])
        let location = response.headers[HTTPField.Name.contentLocation]
        return (response, location.flatMap { URL(string: $0)?.path })
    }

    /// Kicks off and plans an export, then reads its manifest.
    static func completeExport(_ harness: TestHarness, _ query: String = "", token: String) async throws -> [String: Any] {
        let (response, statusPath) = try await kickOff(harness, query, token: token)
        try #require(response.status == .accepted, "kick-off answered \(response.status): \(harness.text(response))")
        try await plan(harness)
        let status = try await harness.request(.get, try #require(statusPath), token: token)
        try #require(status.status == .ok, "status answered \(status.status): \(harness.text(status))")
        return try harness.object(status)
    }

    /// The manifest's files: path → count.
    static func outputs(_ manifest: [String: Any]) throws -> [(path: String, count: Int)] {
        let output = try #require(manifest["output"] as? [[String: Any]])
        return try output.map {
            #expect($0["type"] as? String == "Observation")
            let text = try #require($0["url"] as? String)
            let url = try #require(URL(string: text))
            return (url.path, try #require($0["count"] as? Int))
        }
    }

    /// A file's NDJSON lines, each parsed as an Observation.
    static func lines(_ harness: TestHarness, _ path: String, token: String) async throws -> [Line] {
        let response = try await harness.request(.get, path, token: token)
        try #require(response.status == .ok, "file answered \(response.status): \(harness.text(response))")
        #expect(response.headers[.contentType] == "application/fhir+ndjson")
        return try Self.observations(harness.text(response))
    }

    static func observations(_ text: String) throws -> [Line] {
        try text.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
            #expect(object["resourceType"] as? String == "Observation")
            let coding = try #require(((object["code"] as? [String: Any])?["coding"] as? [[String: Any]])?.first)
            let effective =
                object["effectiveDateTime"] as? String ?? (object["effectivePeriod"] as? [String: Any])?["start"] as? String
            let value = try #require((object["valueQuantity"] as? [String: Any])?["value"] as? NSNumber, "no value: \(line)")
            return Line(code: try #require(coding["code"] as? String), at: try #require(TestHarness.date(effective)), value: value.doubleValue)
        }
    }

    /// What the request's JSON download releases, as lines.
    static func downloaded(_ harness: TestHarness, _ id: String, token: String) async throws -> [Line] {
        try await harness.download(id, token: token).items.map {
            Line(
                code: SampleType(rawValue: $0.type)!.observationCoding.code.code, at: try #require(TestHarness.date($0.at)), value: $0.value)
        }
    }

    /// The request each file of the export holds: path → request id.
    static func fileRequests(_ harness: TestHarness, statusPath: String) async throws -> [String: String] {
        let exportID = String(statusPath.split(separator: "/").last!)
        let rows = try await harness.sql(
            "SELECT n, request_id::text FROM bulk_export_files WHERE export_id = '\(exportID)'")
        var files: [String: String] = [:]
        for row in rows {
            let (n, request) = try row.decode((Int, String).self)
            files["/v1/fhir/bulk-files/\(exportID)/\(n).ndjson"] = request
        }
        return files
    }

    @Test("kick-off 202 + Content-Location; 202 with X-Progress while planning; then the manifest; files equal the downloads")
    func kickOffPollManifest() async throws {
        try await Self.run { harness in
            let parties = try await harness.requestParties()
            try await harness.upload(
                [
                    ("heart_rate", 61, "2026-03-01T08:00:00Z"), ("heart_rate", 72.5, "2026-03-02T08:00:00.25Z"),
                    ("weight", 70.1, "2026-03-02T09:00:00Z"), ("step_count", 1000, "2026-03-02T10:00:00Z"),
                ], token: parties.person)
            let subscription = try await harness.acceptedRequestID(parties, subscriptionDays: 30)
            let oneOff = try await harness.acceptedRequestID(parties, types: ["weight", "heart_rate"])

            let (kickOff, statusPath) = try await Self.kickOff(harness, token: parties.company)
            #expect(kickOff.status == .accepted)
            let location = try #require(kickOff.headers[.contentLocation])
            #expect(location.hasPrefix("http://127.0.0.1:8080/v1/fhir/bulk-status/"))
            let status = try #require(statusPath)

            let planning = try await harness.request(.get, status, token: parties.company)
            #expect(planning.status == .accepted)
            #expect(planning.headers[HTTPField.Name("X-Progress")!] == "planning 0 of 2 requests")
            #expect(planning.headers[.retryAfter] != nil)
            try await Self.plan(harness, files: 1)
            let halfway = try await harness.request(.get, status, token: parties.company)
            #expect(halfway.status == .accepted)
            #expect(halfway.headers[HTTPField.Name("X-Progress")!] == "planning 1 of 2 requests")
            try await Self.plan(harness)

            let done = try await harness.request(.get, status, token: parties.company)
            #expect(done.status == .ok)
            let manifest = try harness.object(done)
            #expect(manifest["requiresAccessToken"] as? Bool == true)
            #expect(manifest["request"] as? String == "http://127.0.0.1:8080/v1/fhir/$export")
            #expect(TestHarness.date(manifest["transactionTime"]) != nil)
            #expect((manifest["error"] as? [Any])?.isEmpty == true)
            let outputs = try Self.outputs(manifest)
            #expect(outputs.count == 2)
            let requests = try await Self.fileRequests(harness, statusPath: status)
            for (path, count) in outputs {
                let lines = try await Self.lines(harness, path, token: parties.company)
                let request = try #require(requests[path])
                let download = try await Self.downloaded(harness, request, token: parties.company)
                #expect(lines.count == count)
                #expect(lines == download, "file \(path) of request \(request)")
            }
            #expect(Set(requests.values) == [subscription, oneOff])
            // Every fetch is a release, recorded as the download's are.
            #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action = 'single_request.data_released'") == 4)
        }
    }

    @Test("_type, _outputFormat, _since: supported values 202, the rest 400 with nothing started; POST too; one planning at a time (429)")
    func parameters() async throws {
        try await Self.run { harness in
            let parties = try await harness.requestParties()
            _ = try await harness.acceptedRequestID(parties)
            for query in ["?_type=Patient", "?_type=Observation,Patient", "?_type=", "?_outputFormat=application/fhir+json", "?_since=yesterday"] {
                let (response, _) = try await Self.kickOff(harness, query, token: parties.company)
                #expect(response.status == .badRequest, "\(query)")
                #expect(response.headers[.contentType]?.hasPrefix("application/problem+json") == true)
                #expect(!(try harness.errorFields(response)).isEmpty, "\(query)")
            }
            #expect(try await harness.int("SELECT count(*) FROM bulk_exports") == 0)

            let (first, _) = try await Self.kickOff(
                harness, "?_type=Observation&_outputFormat=application%2Ffhir%2Bndjson&_since=2026-01-01T00:00:00Z", token: parties.company,
                method: .post)
            #expect(first.status == .accepted)
            // The first is still planning: the IG's 429, with Retry-After.
            let (second, _) = try await Self.kickOff(harness, "?_type=Observation", token: parties.company)
            #expect(second.status == .tooManyRequests)
            #expect(second.headers[.retryAfter] != nil)
            try await Self.plan(harness)
            let (third, _) = try await Self.kickOff(harness, "?_outputFormat=ndjson", token: parties.company)
            #expect(third.status == .accepted)
            try await Self.plan(harness)
            // The IG's own spelling, with a raw `+` (which a query string decodes as a space), and an offset.
            let (raw, _) = try await Self.kickOff(
                harness, "?_outputFormat=application/fhir+ndjson&_since=2026-01-01T09:00:00+01:00", token: parties.company)
            #expect(raw.status == .accepted, "\(harness.text(raw))")

            // Only companies.
            let (person, _) = try await Self.kickOff(harness, token: parties.person)
            #expect(person.status == .forbidden)
            let auditor = try await harness.activeAuditor()
            let (byAuditor, _) = try await Self.kickOff(harness, token: auditor)
            #expect(byAuditor.status == .forbidden)
        }
    }

    @Test("attack: another company's token on the status and file URLs is a 404, never a 403; the person's a 403")
    func anotherCompany() async throws {
        try await Self.run { harness in
            let parties = try await harness.requestParties()
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: parties.person)
            _ = try await harness.acceptedRequestID(parties)
            let (_, statusPath) = try await Self.kickOff(harness, token: parties.company)
            let status = try #require(statusPath)
            try await Self.plan(harness)
            let manifest = try harness.object(try await harness.request(.get, status, token: parties.company))
            let file = try #require(try Self.outputs(manifest).first?.path)

            var rival = TestHarness.Company()
            rival.vatNumber = TestHarness.uniqueVATNumber()
            let rivalToken = try await harness.activeCompany(rival)
            for (method, path) in [(HTTPRequest.Method.get, status), (.get, file), (.delete, status)] {
                let response = try await harness.request(method, path, token: rivalToken)
                #expect(response.status == .notFound, "\(method) \(path)")
                #expect(!harness.text(response).contains(parties.companyID))
                let person = try await harness.request(method, path, token: parties.person)
                #expect(person.status == .forbidden, "\(method) \(path)")
            }
            // Nothing of the company's was released to the rival, and its export is intact.
            #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action = 'single_request.data_released'") == 0)
            #expect(try await harness.request(.get, file, token: parties.company).status == .ok)
            // The owner deletes it (202, as the IG asks): then it is gone for the owner too.
            #expect(try await harness.request(.delete, status, token: parties.company).status == .accepted)
            #expect(try await harness.request(.get, status, token: parties.company).status == .notFound)
            #expect(try await harness.request(.get, file, token: parties.company).status == .notFound)
        }
    }

    @Test("attack: refused, pending, cancelled requests and another company's requests never appear")
    func onlyTheCompanysGrants() async throws {
        try await Self.run { harness in
            let parties = try await harness.requestParties()
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0), TestHarness.time(minutes: 1)], token: parties.person)
            let accepted = try await harness.acceptedRequestID(parties, types: ["weight", "heart_rate"])
            // A refusal reads as pending to the company until the request expires: the refused one is to a second person.
            let second = try await harness.requestParties()
            let toSecond = RequestParties(
                company: parties.company, companyID: parties.companyID, person: second.person, personID: second.personID,
                personEmail: second.personEmail, personFiscalCode: second.personFiscalCode)
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: second.person)
            let refused = try await harness.sentRequestID(toSecond, types: ["heart_rate"])
            #expect(try await harness.request(.post, "/v1/single-requests/\(refused)/refuse", token: second.person).status == .ok)
            let cancelled = try await harness.sentRequestID(parties, types: ["heart_rate"])
            #expect(try await harness.request(.post, "/v1/single-requests/\(cancelled)/cancel", token: parties.company).status == .ok)
            _ = try await harness.sentRequestID(parties, types: ["heart_rate"])  // pending
            // Another company's accepted request for the same person.
            var rival = TestHarness.Company()
            rival.vatNumber = TestHarness.uniqueVATNumber()
            let rivalToken = try await harness.activeCompany(rival)
            let rivalParties = RequestParties(
                company: rivalToken, companyID: try await harness.accountID(rivalToken), person: parties.person, personID: parties.personID,
                personEmail: parties.personEmail, personFiscalCode: parties.personFiscalCode)
            let rivals = try await harness.acceptedRequestID(rivalParties, subscriptionDays: 30)

            let (_, statusPath) = try await Self.kickOff(harness, token: parties.company)
            let status = try #require(statusPath)
            let planning = try await harness.request(.get, status, token: parties.company)
            #expect(planning.headers[HTTPField.Name("X-Progress")!] == "planning 0 of 1 requests")
            try await Self.plan(harness)
            let manifest = try harness.object(try await harness.request(.get, status, token: parties.company))
            #expect(Set(try await Self.fileRequests(harness, statusPath: status).values) == [accepted])
            let outputs = try Self.outputs(manifest)
            #expect(outputs.map(\.count) == [2])
            // The rival's own export holds its own request only.
            let rivalManifest = try await Self.completeExport(harness, token: rivalToken)
            #expect(try Self.outputs(rivalManifest).count == 1)
            #expect(try await harness.int("SELECT count(*) FROM bulk_export_files WHERE request_id = '\(rivals)'") == 1)
            // A company with no grant gets an empty manifest at once.
            var empty = TestHarness.Company()
            empty.vatNumber = TestHarness.uniqueVATNumber()
            let emptyManifest = try await Self.completeExport(harness, token: try await harness.activeCompany(empty))
            #expect((emptyManifest["output"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("attack: samples outside the window or of other types, and a type unshared after the grant, are not in the file")
    func releaseRules() async throws {
        try await Self.run { harness in
            let parties = try await harness.requestParties()
            try await harness.upload(
                [
                    ("heart_rate", 61, "2026-03-01T08:00:00Z"), ("heart_rate", 72.5, "2026-03-02T08:00:00Z"),
                    ("heart_rate", 80, "2026-03-05T08:00:00Z"), ("weight", 70.1, "2026-03-02T09:00:00Z"),
                    ("step_count", 1000, "2026-03-02T10:00:00Z"),
                ], token: parties.person)
            let id = try await harness.acceptedRequestID(
                parties, types: ["heart_rate", "weight"], window: .init(from: "2026-03-01T12:00:00Z", to: "2026-03-04T00:00:00Z"))
            let manifest = try await Self.completeExport(harness, token: parties.company)
            let outputs = try Self.outputs(manifest)
            #expect(outputs.map(\.count) == [2])
            let path = try #require(outputs.first?.path)
            let heartRate = SampleType.heartRate.observationCoding.code.code
            let weight = SampleType.weight.observationCoding.code.code
            #expect(Set(try await Self.lines(harness, path, token: parties.company).map(\.code)) == [heartRate, weight])

            // The person stops sharing weight after the export was planned: the file leaves it out, as the download does.
            try await SharingPreferenceTests.unshare(harness, ["weight"], token: parties.person)
            let lines = try await Self.lines(harness, path, token: parties.company)
            #expect(lines.map(\.description) == ["\(heartRate)@2026-03-02T08:00:00Z=72.5"])
            #expect(lines == (try await Self.downloaded(harness, id, token: parties.company)))
        }
    }

    @Test("_since = an earlier export's transactionTime: over a growing subscription, each sample exactly once")
    func sinceExactlyOnce() async throws {
        try await Self.run { harness in
            let parties = try await harness.requestParties()
            try await harness.uploadHeartRates((0..<3).map { TestHarness.time(minutes: $0) }, token: parties.person)
            let subscription = try await harness.acceptedRequestID(parties, subscriptionDays: 30)
            let first = try await Self.completeExport(harness, token: parties.company)
            let transactionTime = try #require(first["transactionTime"] as? String)
            var union: [Line] = []
            for (path, _) in try Self.outputs(first) { union += try await Self.lines(harness, path, token: parties.company) }
            #expect(union.count == 3)

            // The subscription grows, and a one-off request is granted that the first export never had.
            try await harness.uploadHeartRates((3..<5).map { TestHarness.time(minutes: $0) }, token: parties.person, firstValue: 90)
            let later = try await harness.acceptedRequestID(parties, types: ["heart_rate"])
            let encoded = try #require(transactionTime.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let second = try await Self.completeExport(harness, "?_since=\(encoded)", token: parties.company)
            #expect((second["request"] as? String)?.contains("_since=") == true)
            let requests = try await Self.fileRequests(harness, statusPath: "/v1/fhir/bulk-status/" + Self.exportID(second))
            var fromSubscription: [Line] = []
            var fromLater: [Line] = []
            for (path, count) in try Self.outputs(second) {
                let lines = try await Self.lines(harness, path, token: parties.company)
                #expect(lines.count == count)
                if requests[path] == subscription { fromSubscription += lines } else { fromLater += lines }
            }
            // The subscription's file starts where the first export's ended: each of its samples exactly once.
            union += fromSubscription
            let all = try await Self.downloaded(harness, subscription, token: parties.company)
            #expect(union.count == all.count)
            #expect(Set(union) == Set(all))
            // The request the first export did not hold starts at 0: the company never had its samples.
            #expect(fromLater.count == 5)
            #expect(requests.values.contains(later))
        }
    }

    /// The export id in a manifest's file URLs.
    static func exportID(_ manifest: [String: Any]) throws -> String {
        let path = try #require(try outputs(manifest).first?.path)
        return String(path.split(separator: "/").dropLast().last!)
    }

    @Test("_since = any other instant: starts after the samples uploaded (received) at or before it")
    func sinceByUploadTime() async throws {
        try await Self.run { harness in
            let parties = try await harness.requestParties()
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: parties.person)
            _ = try await harness.acceptedRequestID(parties, subscriptionDays: 30)
            let received = try #require(try await harness.sql("SELECT max(received_at) FROM sample_batches").first?.decode(Date.self))
            try await harness.uploadHeartRates([TestHarness.time(minutes: 1)], token: parties.person, firstValue: 99)
            let since = try #require(Timestamp.rfc3339(received).addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let manifest = try await Self.completeExport(harness, "?_since=\(since)", token: parties.company)
            let path = try #require(try Self.outputs(manifest).first?.path)
            #expect(try await Self.lines(harness, path, token: parties.company).map(\.value) == [99])
        }
    }

    @Test("expiry: after BULK_EXPORT_TTL the status and files are 404, and the sweep removes the rows")
    func expiry() async throws {
        let clock = ManualClock()
        try await Self.run(configure: { $0.clock = clock.wall }) { harness in
            let parties = try await harness.requestParties()
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: parties.person)
            _ = try await harness.acceptedRequestID(parties)
            let (_, statusPath) = try await Self.kickOff(harness, token: parties.company)
            let status = try #require(statusPath)
            try await Self.plan(harness, clock: clock.wall)
            let manifest = try harness.object(try await harness.request(.get, status, token: parties.company))
            let file = try #require(try Self.outputs(manifest).first?.path)

            clock.advance(by: .seconds(86_400 - 60))
            try await Self.plan(harness, clock: clock.wall)  // the sweep runs with the planner: not yet
            #expect(try await harness.request(.get, status, token: parties.company).status == .ok)
            #expect(try await harness.request(.get, file, token: parties.company).status == .ok)
            #expect(try await harness.int("SELECT count(*) FROM bulk_exports") == 1)

            clock.advance(by: .seconds(61))
            #expect(try await harness.request(.get, status, token: parties.company).status == .notFound)
            #expect(try await harness.request(.get, file, token: parties.company).status == .notFound)
            let removed = try await TestDatabase.withClient(harness.databaseURL) { pool in
                try await BulkExportPlanner(client: pool, interval: nil, clock: clock.wall, logger: TestDatabase.logger).removeExpired()
            }
            #expect(removed == 1)
            #expect(try await harness.int("SELECT count(*) FROM bulk_exports") == 0)
            #expect(try await harness.int("SELECT count(*) FROM bulk_export_files") == 0)
        }
    }

    @Test("a client that vanishes mid-file fetches it again and gets the whole file")
    func vanishedClient() async throws {
        try await Self.run { harness in
            let parties = try await harness.requestParties()
            let rows = 30_000
            try await SingleRequestDisconnectTests.largeRelease(harness, parties, rows: rows)
            // As an upload records it: what the export counts as uploaded before its transaction time.
            _ = try await harness.sql(
                "INSERT INTO sample_batches (user_id, last_arrival, received_at) VALUES ('\(parties.personID)', \(rows), now() - interval '1 second')"
            )
            _ = try await harness.acceptedRequestID(parties, subscriptionDays: 30)
            let manifest = try await Self.completeExport(harness, token: parties.company)
            let (path, count) = try #require(try Self.outputs(manifest).first)
            #expect(count == rows)
            let port = try #require(harness.client.port)
            let received = try await onOwnThread {
                try SingleRequestDisconnectTests.readAndHangUp(port: port, path: path, token: parties.company, bytes: 64 * 1024)
            }
            #expect(received >= 64 * 1024)
            let (complete, released) = try #require(try await SingleRequestDisconnectTests.releaseRecord(harness))
            #expect(complete == "false")
            #expect(released < rows)

            // On a connection of its own: the harness's keeps the whole 23 MB answer in one buffer.
            let again = try await harness.sendOnNewConnection(.get, path, headers: [.authorization: "Bearer \(parties.company)"])
            #expect(again.status == .ok)
            let lines = try Self.observations(again.body.map { String(buffer: $0) } ?? "")
            #expect(lines.count == rows)
            #expect(Set(lines.map(\.at)).count == rows)
        }
    }
}
