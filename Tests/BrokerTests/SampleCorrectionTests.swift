import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Corrections (issue 29, item 4): a person deletes one sample, a range of one type or everything of one
/// type; their rollups, statistics and export follow in the same transaction, downloads never release what
/// was deleted, and what was already released (a company's copy, a group release) stays as it was.
@Suite("Sample corrections")
struct SampleCorrectionTests {
    /// `POST /v1/me/samples/deletions` with a JSON body of the given fields.
    static func delete(_ harness: TestHarness, _ token: String, _ fields: [String: String]) async throws -> TestResponse {
        let body = "{" + fields.sorted { $0.key < $1.key }.map { #""\#($0.key)":"\#($0.value)""# }.joined(separator: ",") + "}"
        return try await harness.request(.post, "/v1/me/samples/deletions", json: body, token: token)
    }

    /// Deletes and requires 200; answers the body.
    static func deleted(_ harness: TestHarness, _ token: String, _ fields: [String: String]) async throws -> [String: Any] {
        let response = try await delete(harness, token, fields)
        try #require(response.status == .ok, "deletion answered \(response.status): \(harness.text(response))")
        return try harness.object(response)
    }

    static func samples(_ harness: TestHarness, _ token: String, type: String = "heart_rate") async throws -> [String] {
        let response = try await harness.request(.get, "/v1/me/samples?type=\(type)&limit=1000", token: token)
        try #require(response.status == .ok)
        return (try harness.object(response)["items"] as? [[String: Any]] ?? []).compactMap { $0["at"] as? String }
    }

    static func rollupsAreConsistent(_ harness: TestHarness) async throws -> Bool {
        try await harness.int(ConsistencyChecks.rollupMismatches) == 0
    }

    @Test("one sample: only it goes, its day's rollup is recomputed (sleep on the local wake-up day too)")
    func oneSample() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(.init(fiscalCode: TestHarness.uniqueFiscalCode()))
            // Rome (UTC+1 in March): the night ending on 2 March and a nap that afternoon both count for 2 March.
            let upload = try await harness.request(
                .post, "/v1/me/samples",
                json: #"{"timeZone":"Europe/Rome","samples":[{"type":"heart_rate","value":60,"at":"2026-03-01T08:00:00Z"},"#
                    + #"{"type":"heart_rate","value":61.25,"at":"2026-03-01T08:00:00.123456Z"},{"type":"heart_rate","value":90,"at":"2026-03-01T09:00:00Z"},"#
                    + #"{"type":"sleeping_hours","value":8,"at":"2026-03-01T22:00:00Z"},{"type":"sleeping_hours","value":1,"at":"2026-03-02T13:00:00Z"}]}"#,
                token: token)
            try #require(upload.status == .ok, "\(harness.text(upload))")

            // The exact microsecond names the sample; the one a microsecond-truncated bound would also hit stays.
            let answer = try await Self.deleted(harness, token, ["type": "heart_rate", "at": "2026-03-01T08:00:00.123456Z"])
            #expect(answer["deleted"] as? Int == 1)
            #expect(answer["type"] as? String == "heart_rate")
            #expect(TestHarness.date(answer["from"]) == TestHarness.date(answer["to"]))
            #expect(try await Self.samples(harness, token) == ["2026-03-01T08:00:00Z", "2026-03-01T09:00:00Z"])
            let day = try #require(try await harness.sql("SELECT count, sum, min, max FROM daily_rollups WHERE type = 1").first)
            #expect(try day.decode((Int, Double, Double, Double).self) == (2, 150, 60, 90))

            #expect(try await Self.deleted(harness, token, ["type": "sleeping_hours", "at": "2026-03-02T13:00:00Z"])["deleted"] as? Int == 1)
            let sleep = try await harness.sql("SELECT to_char(day, 'YYYY-MM-DD'), sum FROM daily_rollups WHERE type = 9")
            #expect(try sleep.map { try $0.decode((String, Double).self) }.map { "\($0.0)=\($0.1)" } == ["2026-03-02=8.0"])
            // A sample that is not there: nothing deleted, nothing recorded.
            #expect(try await Self.deleted(harness, token, ["type": "heart_rate", "at": "2026-03-01T08:00:00.5Z"])["deleted"] as? Int == 0)
            #expect(try await harness.int("SELECT count(*) FROM access_log WHERE kind = 'correction'") == 2)
            #expect(try await Self.rollupsAreConsistent(harness))
        }
    }

    @Test("a range of one type, then everything of a type: other types, other people and the range's edges stay")
    func rangeAndEverything() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(.init(fiscalCode: TestHarness.uniqueFiscalCode()))
            let other = try await harness.activeUser(.init(fiscalCode: TestHarness.uniqueFiscalCode()))
            let times = (0..<6).map { TestHarness.time(minutes: $0 * 30) }  // 08:00 … 10:30
            for person in [token, other] {
                try await harness.uploadHeartRates(times, token: person)
                #expect(try await harness.upload([(type: "step_count", value: 500, at: times[0])], token: person).status == .ok)
            }
            // Inclusive on both sides: 08:30, 09:00 and 09:30.
            let range = try await Self.deleted(harness, token, ["type": "heart_rate", "from": times[1], "to": times[3]])
            #expect(range["deleted"] as? Int == 3)
            #expect(try await Self.samples(harness, token) == [times[0], times[4], times[5]])
            let everything = try await Self.deleted(harness, token, ["type": "heart_rate"])
            #expect(everything["deleted"] as? Int == 3)
            #expect(everything["from"] == nil && everything["to"] == nil)
            #expect(try await Self.samples(harness, token).isEmpty)
            #expect(try await harness.int("SELECT count(*) FROM daily_rollups r JOIN accounts a ON a.id = r.user_id WHERE r.type = 1") == 1)
            // The steps, and the other person's everything, untouched.
            #expect(try await Self.samples(harness, token, type: "step_count") == [times[0]])
            #expect(try await Self.samples(harness, other) == times)
            #expect(try await Self.rollupsAreConsistent(harness))
        }
    }

    @Test("own statistics and the personal export follow at once")
    func statisticsAndExportFollow() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(.init(fiscalCode: TestHarness.uniqueFiscalCode()))
            try await harness.uploadHeartRates(
                [TestHarness.time(minutes: 0), TestHarness.time(minutes: 60), TestHarness.time(minutes: 0, day: "2026-03-02")], token: token,
                firstValue: 70)
            func own() async throws -> [[String: Any]] {
                let response = try await harness.request(
                    .get, "/v1/me/statistics?type=heart_rate&from=2026-03-01&to=2026-03-02", token: token)
                try #require(response.status == .ok)
                return try harness.object(response)["own"] as? [[String: Any]] ?? []
            }
            #expect(try await own().map { "\($0["start"]!)/\($0["count"]!)/\($0["mean"]!)" } == ["2026-03-01/2/70.5", "2026-03-02/1/72"])
            _ = try await Self.deleted(harness, token, ["type": "heart_rate", "at": TestHarness.time(minutes: 60)])
            _ = try await Self.deleted(harness, token, ["type": "heart_rate", "from": "2026-03-02T00:00:00Z", "to": "2026-03-02T23:59:59Z"])
            #expect(try await own().map { "\($0["start"]!)/\($0["count"]!)/\($0["mean"]!)" } == ["2026-03-01/1/70"])

            let export = try await harness.request(.get, "/v1/me/export", token: token)
            try #require(export.status == .ok)
            let document = try harness.object(export)
            let samples = document["samples"] as? [[String: Any]] ?? []
            #expect(samples.compactMap { $0["at"] as? String } == [TestHarness.time(minutes: 0)])
            let log = document["accessLog"] as? [[String: Any]] ?? []
            #expect(log.count == 2 && log.allSatisfy { $0["kind"] as? String == "correction" && $0["thirdParty"] == nil })
        }
    }

    @Test("the access log and the audit log record type, range and count, never a value")
    func recordedWithoutValues() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(.init(fiscalCode: TestHarness.uniqueFiscalCode()))
            let personID = try await harness.accountID(token)
            try await harness.upload(
                [
                    (type: "heart_rate", value: 123.456, at: TestHarness.time(minutes: 0)),
                    (type: "heart_rate", value: 98.765, at: TestHarness.time(minutes: 5)),
                ],
                token: token)
            _ = try await Self.deleted(harness, token, ["type": "heart_rate", "from": "2026-03-01T07:00:00Z", "to": "2026-03-01T09:00:00Z"])

            let page = try harness.object(try await harness.request(.get, "/v1/me/access-log", token: token))
            let entry = try #require((page["items"] as? [[String: Any]])?.first)
            #expect(entry["kind"] as? String == "correction")
            #expect(entry["samples"] as? Int == 2)
            #expect(entry["types"] as? [String] == ["heart_rate"])
            #expect(entry["thirdParty"] == nil && entry["requestId"] == nil)
            #expect(TestHarness.date(entry["from"]) == TestHarness.date("2026-03-01T07:00:00Z"))
            #expect(TestHarness.date(entry["to"]) == TestHarness.date("2026-03-01T09:00:00Z"))
            let description = try #require(entry["description"] as? String)
            #expect(description.hasPrefix("You corrected your data: 2 samples of heart rate from 2026-03-01T07:00:00Z to 2026-03-01T09:00:00Z"))

            let event = try #require(
                try await harness.sql(
                    "SELECT actor_id, actor_role, subject, details::text FROM audit_events WHERE action = 'samples.corrected'"
                ).first)
            let (actor, role, subject, details) = try event.decode((String?, String, String?, String).self)
            #expect(role == "user" && actor == subject && subject?.hasPrefix("p_") == true)
            let fields = try #require(try JSONSerialization.jsonObject(with: Data(details.utf8)) as? [String: Any])
            #expect(Set(fields.keys) == ["type", "from", "to", "samples"])
            #expect(fields["samples"] as? Int == 2)
            for text in [details, description] {
                #expect(!text.contains("123") && !text.contains("98.7") && !text.contains(personID), "\(text)")
            }
            #expect(try await harness.bool(ConsistencyChecks.chainIsValid))
        }
    }

    @Test("bad input answers 422 naming the field and deletes nothing; a company and an auditor are refused 403")
    func badInputAndRoles() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0), TestHarness.time(minutes: 1)], token: parties.person)
            let cases: [([String: String], String)] = [
                ([:], "type"),
                (["type": "heart_beat"], "type"),
                (["type": ""], "type"),
                (["type": "heart_rate", "from": "2026-03-02T00:00:00Z", "to": "2026-03-01T00:00:00Z"], "from"),
                (["type": "heart_rate", "at": TestHarness.time(minutes: 0), "from": "2026-03-01T00:00:00Z"], "at"),
                (["type": "heart_rate", "at": TestHarness.time(minutes: 0), "to": "2026-03-02T00:00:00Z"], "at"),
                (["type": "heart_rate", "to": "yesterday"], "to"),
                (["type": "heart_rate", "at": "2026-03-01 08:00"], "at"),
            ]
            for (fields, field) in cases {
                let response = try await Self.delete(harness, parties.person, fields)
                #expect(response.status == .unprocessableContent, "\(fields)")
                #expect(response.headers[.contentType] == "application/problem+json", "\(fields)")
                #expect(try harness.errorFields(response).contains(field), "\(fields): \(harness.text(response))")
            }
            let malformed = try await harness.request(.post, "/v1/me/samples/deletions", json: "{", token: parties.person)
            #expect(malformed.status == .badRequest)

            let auditor = try await harness.activeAuditor()
            for token in [parties.company, auditor] {
                for fields in [["type": "heart_rate"], ["type": "nonsense"]] {
                    let refused = try await Self.delete(harness, token, fields)
                    #expect(refused.status == .forbidden, "\(fields)")
                    #expect(harness.text(refused).contains("wrong-role"), "\(harness.text(refused))")
                }
            }
            #expect(try await harness.request(.post, "/v1/me/samples/deletions", json: #"{"type":"heart_rate"}"#).status == .unauthorized)
            #expect(try await Self.samples(harness, parties.person).count == 2)
            #expect(try await harness.int("SELECT count(*) FROM access_log") == 0)
            #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action = 'samples.corrected'") == 0)
        }
    }

    /// The attack: a company holding a cursor from before the correction replays it after, or downloads
    /// afresh; a one-off request accepted before it is downloaded after. None of them returns what was deleted,
    /// and the webhook that announces new data carries a cursor only.
    @Test("a cursor from before the correction, replayed after it, does not return deleted samples")
    func cursorReplay() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestHarness.run(configure: WebhookFixtures.fast) { harness in
                let parties = try await harness.requestParties()
                let hook = try await harness.request(
                    .put, "/v1/webhook", json: #"{"url":"\#(receiver.url("company"))","secret":"\#(WebhookFixtures.secret)"}"#, token: parties.company
                )
                try #require(hook.status == .ok)
                let first = (0..<3).map { TestHarness.time(minutes: $0) }
                let later = (10..<14).map { TestHarness.time(minutes: $0) }
                try await harness.uploadHeartRates(first, token: parties.person)
                let subscription = try await harness.acceptedRequestID(parties, subscriptionDays: 30)
                let before = try await harness.download(subscription, token: parties.company)
                #expect(before.items.map(\.at) == first)
                try await harness.uploadHeartRates(later, token: parties.person, firstValue: 80)
                let oneOff = try await harness.acceptedRequestID(parties)

                _ = try await Self.deleted(harness, parties.person, ["type": "heart_rate", "at": later[1]])
                _ = try await Self.deleted(harness, parties.person, ["type": "heart_rate", "from": later[3], "to": later[3]])
                _ = try await Self.deleted(harness, parties.person, ["type": "heart_rate", "at": first[0]])

                let replayed = try await harness.download(subscription, cursor: before.nextCursor, token: parties.company)
                #expect(replayed.items.map(\.at) == [later[0], later[2]])
                let replayedAgain = try await harness.download(subscription, cursor: before.nextCursor, token: parties.company)
                #expect(replayedAgain.items.map(\.at) == [later[0], later[2]])
                let fresh = try await harness.download(subscription, token: parties.company)
                #expect(fresh.items.map(\.at) == [first[1], first[2], later[0], later[2]])
                #expect(try await harness.download(oneOff, token: parties.company).items.map(\.at) == [first[1], first[2], later[0], later[2]])
                // Uploads are announced with a cursor and the request, never a value or a count of what was deleted.
                try await harness.uploadHeartRates([TestHarness.time(minutes: 30)], token: parties.person, firstValue: 99)
                let announced = try await harness.queuedEvents(where: "type = 'subscription.data_available'")
                #expect(announced.count >= 2)
                for event in announced {
                    #expect(Set(event.data.keys) == ["cursor", "requestId"])
                }
            }
        }
    }

    /// The attack on a streaming download: the company starts a large download, and while its first bytes
    /// go out (the stream has read the next chunk ahead meanwhile) the person deletes from inside that chunk
    /// on. The deletion commits inside the first `send`, so every row sent after it must be one it left:
    /// before a read-ahead chunk is sent, the person's data revision is checked, and the chunk read again
    /// since the deletion moved it. Without that check the 5,000 deleted rows of the read-ahead chunk went out
    /// after the deletion had committed. (Driven at the service, not through a socket: how much a socket's
    /// buffers take before the deletion is up to the kernel, so only here is "after" exact.)
    @Test("a deletion committed while a download is streaming is not sent by any chunk after it")
    func streamingDownloadBetweenChunks() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let rows = 40_000
            try await SingleRequestDisconnectTests.largeRelease(harness, parties, rows: rows)
            let id = try #require(UUID(uuidString: try await harness.acceptedRequestID(parties)))
            let cut = try #require(
                try await harness.sql("SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM samples WHERE arrival = 15001")
                    .first?.decode(String.self))
            let company = Principal(
                accountID: try #require(UUID(uuidString: parties.companyID)), role: .thirdParty, credential: .session(tokenHash: Data()))
            let person = try #require(UUID(uuidString: parties.personID))
            let url = harness.databaseURL
            try await TestDatabase.withClient(url) { client in
                let pseudonymizer = Pseudonymizer(client: client)
                let requests = SingleRequestService(client: client, pseudonymizer: pseudonymizer)
                let samples = SampleService(client: client, groupMinCohort: 1000)
                let plan = try await requests.prepareDownload(id: id, cursor: nil, by: company, logger: TestDatabase.logger)
                let sent = SentBytes()
                try await requests.streamDownload(plan, format: .csv, logger: TestDatabase.logger) { bytes in
                    if await sent.append(bytes) {
                        // The first send: let the read-ahead finish, then delete from inside it.
                        try? await Task.sleep(for: .milliseconds(500))
                        let correction = try? SampleCorrection.parse(type: "heart_rate", at: nil, from: cut, to: nil)
                        if let correction {
                            await sent.deleted(
                                (try? await samples.correct(
                                    correction, by: Principal(accountID: person, role: .user, credential: .session(tokenHash: Data())),
                                    logger: TestDatabase.logger)) ?? -1)
                        }
                    }
                    return true
                }
                #expect(await sent.deletedCount == rows - 15_000)
                let lines = String(decoding: await sent.bytes, as: UTF8.self).split(separator: "\r\n").dropFirst()
                let cutDate = try #require(TestHarness.date(cut))
                let late = lines.filter { line in
                    let at = line.split(separator: ",").dropFirst().first.map(String.init)
                    return (at.flatMap { TestHarness.date($0) } ?? .distantPast) >= cutDate
                }
                #expect(late.count == 0, "deleted samples sent after the deletion committed")
                #expect(lines.count == 15_000)
            }
        }
    }

    /// An upload in progress holds the person's arrival lock; a correction waits for it, so the upload's
    /// samples inside the range are deleted too and the rollups match the samples left.
    @Test("a correction waits for an upload in progress of the same person, then deletes what it stored")
    func serialisedWithUploads() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(.init(fiscalCode: TestHarness.uniqueFiscalCode()))
            let personID = try #require(UUID(uuidString: try await harness.accountID(token)))
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0), TestHarness.time(minutes: 10)], token: token)
            let correction = try await TestDatabase.withClient(harness.databaseURL) { client in
                try await client.withTransaction(logger: TestDatabase.logger) { connection in
                    _ = try await SampleStore.ingest(
                        [Sample(type: .heartRate, value: 77, at: Timestamp.parse(TestHarness.time(minutes: 5))!)], for: personID, on: connection,
                        logger: TestDatabase.logger)
                    let correction = Task {
                        try await harness.requestOnNewConnection(
                            .post, "/v1/me/samples/deletions",
                            json: #"{"type":"heart_rate","from":"2026-03-01T08:00:00Z","to":"2026-03-01T08:07:00Z"}"#, token: token)
                    }
                    try await Task.sleep(for: .milliseconds(800))
                    // Still waiting for the upload: nothing deleted yet.
                    #expect(try await harness.int("SELECT count(*) FROM access_log WHERE kind = 'correction'") == 0)
                    return correction
                }
            }
            let (status, body) = try await correction.value
            #expect(status == .ok, "\(body)")
            #expect(body.contains(#""deleted":2"#), "\(body)")
            #expect(try await Self.samples(harness, token) == [TestHarness.time(minutes: 10)])
            #expect(try await Self.rollupsAreConsistent(harness))
        }
    }

    @Test("a group release stored before a correction is unchanged after it")
    func groupReleaseUnchanged() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            _ = try await GroupFixtures.populate(harness, (0..<5).map { _ in GroupFixtures.Member(heartRate: [1: [70], 2: [72]]) })
            let token = try await harness.activeUser(.init(fiscalCode: TestHarness.uniqueFiscalCode()))
            try await harness.upload(
                [(type: "heart_rate", value: 100, at: "2026-03-01T08:00:00Z"), (type: "heart_rate", value: 110, at: "2026-03-02T08:00:00Z")],
                token: token)
            let company = try await harness.activeCompany(.init(vatNumber: TestHarness.uniqueVATNumber()))
            let created = try await harness.request(
                .post, "/v1/group-requests",
                json:
                    #"{"types":["heart_rate"],"filters":[],"demographics":{"sex":"F"},"window":{"from":"2026-03-01","to":"2026-03-02"},"bucket":"day","purpose":"Study","purposeCode":"HRESCH"}"#,
                token: company)
            try #require(created.status == .created, "\(harness.text(created))")
            let id = try #require(try harness.object(created)["id"] as? String)
            let results = { try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company) }
            let before = try await results()
            let stored = try await harness.sql("SELECT id, cells::text FROM group_releases ORDER BY id").map { try $0.decode((Int64, String).self) }
            try #require(before.status == .ok && stored.count == 1)
            #expect(harness.text(before).contains("\"people\":6"))

            #expect(try await Self.deleted(harness, token, ["type": "heart_rate"])["deleted"] as? Int == 2)
            let after = try await results()
            #expect(after.status == .ok)
            #expect(harness.text(after) == harness.text(before))
            let storedAfter = try await harness.sql("SELECT id, cells::text FROM group_releases ORDER BY id").map {
                try $0.decode((Int64, String).self)
            }
            #expect(storedAfter.map(\.0) == stored.map(\.0) && storedAfter.map(\.1) == stored.map(\.1))
        }
    }

    @Test("console: a range is counted and confirmed before it is deleted; one sample goes with its own button")
    func console() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let times = (0..<4).map { TestHarness.time(minutes: $0 * 60) }
            try await harness.uploadHeartRates(times, token: parties.person)
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0, day: "2026-03-03")], token: parties.person)
            let browser = try await ConsoleBrowser.person(harness, parties)
            let data = try await browser.get("/data")
            #expect(data.status == .ok && browser.lastPage.contains("/data/corrections"))
            let page = try await browser.get("/data/corrections?type=heart_rate")
            #expect(page.status == .ok)
            #expect(browser.lastPage.contains("3 Mar 2026, 08:00 UTC"), "an English page's time")

            // Review: counted, nothing deleted yet.
            let review = try await browser.post("/data/corrections", [("type", "heart_rate"), ("from", "2026-03-01"), ("to", "2026-03-01")])
            #expect(review.status == .ok)
            #expect(browser.lastPage.contains("This deletes <strong>4 samples</strong>"))
            #expect(browser.lastPage.contains("already downloaded them keep their copy"))
            #expect(try await Self.samples(harness, parties.person).count == 5)
            // Confirm: the page's own hidden fields.
            let from = try #require(Self.hiddenValue("from", in: browser.lastPage))
            let to = try #require(Self.hiddenValue("to", in: browser.lastPage))
            let confirmed = try await browser.post(
                "/data/corrections", [("type", "heart_rate"), ("from", from), ("to", to), ("confirm", "yes")])
            #expect(confirmed.status == .seeOther)
            #expect(try await Self.samples(harness, parties.person) == [TestHarness.time(minutes: 0, day: "2026-03-03")])
            let location = try #require(confirmed.headers[.location])
            try await browser.get(location)
            #expect(browser.lastPage.contains("Deleted 4 samples"))

            // One sample, with its button's fields.
            let at = try #require(Self.hiddenValue("at", in: browser.lastPage))
            let one = try await browser.post("/data/corrections", [("type", "heart_rate"), ("at", at), ("confirm", "yes")])
            #expect(one.status == .seeOther)
            #expect(try await Self.samples(harness, parties.person).isEmpty)

            // A bad range is shown next to its field; nothing deleted. Without the CSRF token, refused.
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: parties.person)
            try await browser.get("/data/corrections")
            let bad = try await browser.post("/data/corrections", [("type", "heart_rate"), ("from", "2026-03-02"), ("to", "2026-03-01")])
            #expect(bad.status == .unprocessableContent)
            #expect(browser.lastPage.contains("from-error"))
            let forged = try await browser.post("/data/corrections", [("type", "heart_rate"), ("confirm", "yes")], csrf: .none)
            #expect(forged.status == .forbidden)
            #expect(try await Self.samples(harness, parties.person).count == 1)

            try await browser.get("/access-log")
            #expect(browser.lastPage.contains("You corrected your data: 4 samples of Heart rate (beats/min)"))
        }
    }

    static func hiddenValue(_ name: String, in page: String) -> String? {
        guard let range = page.range(of: #"name="\#(name)" value=""#) else { return nil }
        return String(page[range.upperBound...].prefix { $0 != "\"" })
            .replacingOccurrences(of: "&#x3D;", with: "=").replacingOccurrences(of: "&amp;", with: "&")
    }
}

/// What a download sent, and the count a correction made during its first send deleted.
actor SentBytes {
    private(set) var bytes: [UInt8] = []
    private(set) var deletedCount = 0
    private var sends = 0

    /// Appends a chunk; true for the first one.
    func append(_ chunk: [UInt8]) -> Bool {
        bytes += chunk
        sends += 1
        return sends == 1
    }

    func deleted(_ count: Int) { deletedCount = count }
}
