import BrokerOpenAPI
import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// GPS positions as data (issue 19, part 1): uploaded like samples (JSON or CSV, atomic, idempotent), read
/// back in time order, gone with the person.
@Suite("Positions")
struct PositionUploadTests {
    private func upload(_ harness: TestHarness, _ positions: [Components.Schemas.PositionInput], token: String) async throws -> TestResponse {
        try await harness.request(.post, "/v1/me/positions", json: Components.Schemas.PositionUpload(positions: positions).contractJSON, token: token)
    }

    private func counts(_ response: TestResponse, _ harness: TestHarness) throws -> (accepted: Int?, duplicates: Int?) {
        let body = try harness.object(response)
        return (body["accepted"] as? Int, body["duplicates"] as? Int)
    }

    private func listed(_ harness: TestHarness, token: String, query: String = "") async throws -> [[String: Any]] {
        let response = try await harness.request(.get, "/v1/me/positions\(query)", token: token)
        try #require(response.status == .ok, "\(harness.text(response))")
        return try harness.object(response)["items"] as? [[String: Any]] ?? []
    }

    @Test("JSON positions are stored once: a repeat of a stored or an earlier one of the batch is a duplicate")
    func jsonIsIdempotent() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let first = try await upload(
                harness,
                [
                    .init(at: "2026-05-01T07:00:01Z", latitude: 45.4720, longitude: 9.1750, elevation: 122.5, accuracy: 4),
                    .init(at: "2026-05-01T07:00:00Z", latitude: 45.4719, longitude: 9.1749),
                    .init(at: "2026-05-01T07:00:01Z", latitude: 1, longitude: 1),
                ], token: token)
            #expect(first.status == .ok, "\(harness.text(first))")
            #expect(try counts(first, harness) == (2, 1))
            let again = try await upload(harness, [.init(at: "2026-05-01T07:00:00Z", latitude: 45.4719, longitude: 9.1749)], token: token)
            #expect(try counts(again, harness) == (0, 1))
            // The repeat inside the first batch took no arrival number: a new position after it is stored.
            let more = try await upload(harness, [.init(at: "2026-05-01T07:00:02Z", latitude: 45.4721, longitude: 9.1751)], token: token)
            #expect(try counts(more, harness) == (1, 0), "\(harness.text(more))")

            let items = try await listed(harness, token: token)
            #expect(items.map { $0["at"] as? String } == ["2026-05-01T07:00:00Z", "2026-05-01T07:00:01Z", "2026-05-01T07:00:02Z"])
            #expect(items[1]["latitude"] as? Double == 45.4720 && items[1]["longitude"] as? Double == 9.1750)
            #expect(items[1]["elevation"] as? Double == 122.5 && items[1]["accuracy"] as? Double == 4)
            #expect(items[0]["elevation"] == nil && items[0]["accuracy"] == nil)
            #expect(items[1]["latitude"] as? Double != 1, "the batch's first copy wins, not its repeat")
        }
    }

    @Test("CSV positions, with and without the optional columns; an empty optional field is absent")
    func csv() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let short = try await harness.request(
                .post, "/v1/me/positions", json: "at,latitude,longitude\r\n2026-05-01T07:00:00Z,45.1,9.1\r\n", token: token,
                headers: [.contentType: "text/csv"])
            #expect(short.status == .ok, "\(harness.text(short))")
            let full = try await harness.request(
                .post, "/v1/me/positions",
                json: "at,latitude,longitude,elevation,accuracy\n2026-05-01T07:00:01Z,45.2,9.2,130,\n\"2026-05-01T07:00:02Z\",45.3,9.3,,5\n",
                token: token, headers: [.contentType: "text/csv"])
            #expect(try counts(full, harness) == (2, 0))
            let items = try await listed(harness, token: token)
            #expect(items.count == 3)
            #expect(items[1]["elevation"] as? Double == 130 && items[1]["accuracy"] == nil)
            #expect(items[2]["elevation"] == nil && items[2]["accuracy"] as? Double == 5)
        }
    }

    @Test("one bad position refuses the batch: every offending one is named, nothing is stored")
    func atomic() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let json = try await upload(
                harness,
                [
                    .init(at: "2026-05-01T07:00:00Z", latitude: 45, longitude: 9),
                    .init(at: "2026-05-01T07:00:01Z", latitude: 91, longitude: 9),
                    .init(at: "yesterday", latitude: 45, longitude: 9),
                    .init(at: "2026-05-01T07:00:03Z", latitude: 45, longitude: -181),
                    .init(at: "2026-05-01T07:00:04Z", latitude: 45, longitude: 9, elevation: 20_000),
                    .init(at: "2026-05-01T07:00:05Z", latitude: 45, longitude: 9, accuracy: -1),
                    .init(at: Timestamp.rfc3339(Date().addingTimeInterval(3600)), latitude: 45, longitude: 9),
                ], token: token)
            #expect(json.status == .unprocessableContent)
            #expect(
                try harness.errorFields(json) == [
                    "positions[1].latitude", "positions[2].at", "positions[3].longitude", "positions[4].elevation", "positions[5].accuracy",
                    "positions[6].at",
                ])
            let csv = try await harness.request(
                .post, "/v1/me/positions", json: "at,latitude,longitude\n2026-05-01T07:00:00Z,45,9\n2026-05-01T07:00:01Z,north,9\n",
                token: token, headers: [.contentType: "text/csv"])
            #expect(csv.status == .unprocessableContent)
            #expect(try harness.errorFields(csv) == ["line 3"])
            let header = try await harness.request(
                .post, "/v1/me/positions", json: "latitude,longitude,at\n45,9,2026-05-01T07:00:00Z\n", token: token,
                headers: [.contentType: "text/csv"])
            #expect(try harness.errorFields(header) == ["line 1"])
            let empty = try await upload(harness, [], token: token)
            #expect(try harness.errorFields(empty) == ["positions"])
            #expect(try await harness.int("SELECT count(*) FROM positions") == 0)
        }
    }

    @Test("a batch wrong throughout is answered with its first hundred errors and how many more")
    func errorsAreCapped() throws {
        let entries = (0..<150).map { _ in PositionBatch.Entry(at: "2026-05-01T07:00:00Z", latitude: 95, longitude: 9) }
        guard case .failure(.invalid(let errors)) = PositionBatch.validate(entries, now: Date()) else {
            Issue.record("150 bad positions were accepted")
            return
        }
        #expect(errors.count == 101)
        #expect(errors[99].field == "positions[99].latitude")
        #expect(errors.last == FieldError(field: "positions", message: "and 50 more invalid positions"))
    }

    @Test("only people hold positions: a company's upload and listing are 403 and store nothing")
    func peopleOnly() async throws {
        try await TestHarness.run { harness in
            let company = try await harness.activeCompany()
            let response = try await upload(harness, [.init(at: "2026-05-01T07:00:00Z", latitude: 45, longitude: 9)], token: company)
            #expect(response.status == .forbidden)
            #expect(try await harness.request(.get, "/v1/me/positions", token: company).status == .forbidden)
            #expect(try await harness.int("SELECT count(*) FROM positions") == 0)
        }
    }

    @Test("another person's positions never appear in one's listing or export")
    func othersPositionsStayTheirs() async throws {
        try await TestHarness.run { harness in
            let laura = try await harness.activeUser()
            let mario = try await harness.activeUser(TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode()))
            _ = try await upload(harness, [.init(at: "2026-05-01T07:00:00Z", latitude: 45.4719, longitude: 9.1749)], token: laura)
            #expect(try await listed(harness, token: laura).count == 1)
            #expect(try await listed(harness, token: mario).isEmpty)
            let export = try harness.object(try await harness.request(.get, "/v1/me/export", token: mario))
            #expect((export["positions"] as? [Any])?.isEmpty == true)
            // The same instant is Mario's to upload too: one person's rows do not make another's duplicates.
            let his = try await upload(harness, [.init(at: "2026-05-01T07:00:00Z", latitude: 41.9, longitude: 12.5)], token: mario)
            #expect(try counts(his, harness) == (1, 0))
        }
    }

    @Test("positions and samples spend one upload budget")
    func sharedUploadBudget() async throws {
        try await TestHarness.run(configure: RateLimitFixtures.configure(ManualClock(), [.uploads: .perMinute(2)])) { harness in
            let token = try await harness.activeUser()
            try await harness.uploadHeartRates(["2026-05-01T06:00:00Z"], token: token)
            let first = try await upload(harness, [.init(at: "2026-05-01T07:00:00Z", latitude: 45, longitude: 9)], token: token)
            #expect(first.status == .ok)
            let refused = try await upload(harness, [.init(at: "2026-05-01T07:00:01Z", latitude: 45, longitude: 9)], token: token)
            try RateLimitFixtures.expectRateLimited(refused, harness)
            #expect(try await harness.int("SELECT count(*) FROM positions") == 1)
        }
    }

    @Test("pages follow time order; a cursor that is not one of ours is a 422")
    func paging() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let times = (0..<5).map { "2026-05-01T07:00:0\($0).25Z" }
            _ = try await upload(harness, times.map { .init(at: $0, latitude: 45, longitude: 9) }, token: token)
            var seen: [String] = []
            var cursor: String?
            repeat {
                let query = "?limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")
                let response = try await harness.request(.get, "/v1/me/positions\(query)", token: token)
                let body = try harness.object(response)
                seen += (body["items"] as? [[String: Any]] ?? []).compactMap { $0["at"] as? String }
                cursor = body["nextCursor"] as? String
            } while cursor != nil && seen.count < 10
            #expect(seen == times)
            let window = try await listed(harness, token: token, query: "?from=2026-05-01T07:00:01.25Z&to=2026-05-01T07:00:03.25Z")
            #expect(window.count == 3, "both bounds are inclusive, to the microsecond")
            #expect(try await harness.request(.get, "/v1/me/positions?cursor=not-ours", token: token).status == .unprocessableContent)
        }
    }

    @Test("positions and samples share the person's arrival sequence, in commit order")
    func sharedArrivals() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            try await harness.uploadHeartRates(["2026-05-01T06:00:00Z"], token: token)
            _ = try await upload(harness, [.init(at: "2026-05-01T07:00:00Z", latitude: 45, longitude: 9)], token: token)
            try await harness.uploadHeartRates(["2026-05-01T08:00:00Z"], token: token)
            let arrivals = try await harness.sql(
                """
                SELECT arrival FROM (SELECT arrival FROM samples UNION ALL SELECT arrival FROM positions) a ORDER BY arrival
                """
            ).map { try $0.decode(Int64.self) }
            #expect(arrivals == [1, 2, 3])
            #expect(try await harness.int("SELECT arrival FROM positions") == 2)
            #expect(try await harness.int("SELECT max(last_arrival) FROM sample_batches") == 3)
        }
    }

    @Test("the personal export holds every position, in time order, as the listing shows them")
    func export() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            _ = try await upload(
                harness,
                [
                    .init(at: "2026-05-01T07:00:01.5Z", latitude: -33.8688, longitude: 151.2093, elevation: 12, accuracy: 3.5),
                    .init(at: "2026-05-01T07:00:00Z", latitude: 45.4719, longitude: 9.1749),
                ], token: token)
            let export = try await harness.request(.get, "/v1/me/export", token: token)
            #expect(export.status == .ok)
            let positions = try #require(try harness.object(export)["positions"] as? [[String: Any]], "\(harness.text(export))")
            #expect(positions.map { $0["at"] as? String } == ["2026-05-01T07:00:00Z", "2026-05-01T07:00:01.5Z"])
            #expect(positions[1]["latitude"] as? Double == -33.8688 && positions[1]["longitude"] as? Double == 151.2093)
            #expect(positions[1]["elevation"] as? Double == 12 && positions[1]["accuracy"] as? Double == 3.5)
            #expect(positions[0].keys.sorted() == ["at", "latitude", "longitude"])
            let company = try await harness.activeCompany()
            let companyExport = try harness.object(try await harness.request(.get, "/v1/me/export", token: company))
            #expect((companyExport["positions"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("erasing the person erases their positions")
    func erasure() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            _ = try await upload(harness, [.init(at: "2026-05-01T07:00:00Z", latitude: 45, longitude: 9)], token: token)
            #expect(try await harness.int("SELECT count(*) FROM positions") == 1)
            let erased = try await harness.request(.delete, "/v1/me", json: #"{"password":"\#(person.password)"}"#, token: token)
            #expect(erased.status == .noContent, "\(harness.text(erased))")
            #expect(try await harness.int("SELECT count(*) FROM positions") == 0)
        }
    }

    @Test("a month's partition, created late, takes that month's rows out of the default partition")
    func partitions() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            _ = try await upload(harness, [.init(at: "2019-02-10T07:00:00Z", latitude: 45, longitude: 9)], token: token)
            #expect(try await harness.int("SELECT count(*) FROM positions_default") == 1)
            #expect(try await harness.bool("SELECT ensure_month_partition('positions', '2019-02-01')"))
            #expect(try await harness.int("SELECT count(*) FROM positions_default") == 0)
            #expect(try await harness.int("SELECT count(*) FROM positions_2019_02") == 1)
            #expect(try await harness.bool("SELECT ensure_month_partition('positions', '2019-02-01')") == false)
            #expect(try await listed(harness, token: token).count == 1)
        }
    }
}
