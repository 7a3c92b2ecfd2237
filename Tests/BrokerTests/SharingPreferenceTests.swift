import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Sharing preferences (issue 29, item 3): a type a person does not share is never downloaded, by any path
/// or at any moment of a download, never announced, and moves no group cohort, group cell or peer cell.
@Suite("Sharing preferences", .serialized)
struct SharingPreferenceTests {
    /// `PUT /v1/me/sharing` with (type, shared) settings.
    static func setSharing(_ harness: TestHarness, _ settings: [(String, Bool)], token: String) async throws -> TestResponse {
        let items = settings.map { #"{"type":"\#($0.0)","shared":\#($0.1)}"# }
        return try await harness.request(.put, "/v1/me/sharing", json: #"{"types":["# + items.joined(separator: ",") + "]}", token: token)
    }

    /// Unshares `types`, requiring success.
    static func unshare(_ harness: TestHarness, _ types: [String], token: String) async throws {
        let response = try await setSharing(harness, types.map { ($0, false) }, token: token)
        try #require(response.status == .ok, "PUT /v1/me/sharing answered \(response.status): \(harness.text(response))")
    }

    /// The caller's settings as `GET /v1/me/sharing` answers them: type → shared, and the types in order.
    static func sharing(_ harness: TestHarness, token: String) async throws -> (settings: [String: Bool], order: [String]) {
        let response = try await harness.request(.get, "/v1/me/sharing", token: token)
        try #require(response.status == .ok, "GET /v1/me/sharing answered \(response.status)")
        let items = try #require(try harness.object(response)["types"] as? [[String: Any]])
        let pairs = items.map { ($0["type"] as? String ?? "", $0["shared"] as? Bool) }
        return (Dictionary(uniqueKeysWithValues: pairs.compactMap { name, shared in shared.map { (name, $0) } }), pairs.map(\.0))
    }

    // MARK: The preference itself

    @Test("every type is shared until the person says otherwise; a PUT changes only the types it names, audited by type names only")
    func defaultsAndChanges() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let fresh = try await Self.sharing(harness, token: parties.person)
            #expect(fresh.order == SampleType.allCases.map(\.rawValue))
            #expect(fresh.settings.values.allSatisfy { $0 })

            let changed = try await Self.setSharing(harness, [("weight", false), ("blood_glucose", false)], token: parties.person)
            #expect(changed.status == .ok)
            let answered = try #require(try harness.object(changed)["types"] as? [[String: Any]])
            #expect(answered.count == SampleType.allCases.count)
            let read = try await Self.sharing(harness, token: parties.person).settings
            #expect(read.filter { !$0.value }.keys.sorted() == ["blood_glucose", "weight"])

            // Partial: weight shared again, blood glucose (not named) stays unshared.
            #expect(try await Self.setSharing(harness, [("weight", true)], token: parties.person).status == .ok)
            #expect(try await Self.sharing(harness, token: parties.person).settings.filter { !$0.value }.keys.sorted() == ["blood_glucose"])
            // Setting what is already set records nothing.
            #expect(try await Self.setSharing(harness, [("blood_glucose", false), ("weight", true)], token: parties.person).status == .ok)

            let events = try await harness.sql(
                "SELECT details->>'unshared', details->>'shared', subject, actor_role FROM audit_events WHERE action = 'sharing.changed' ORDER BY seq"
            )
            let rows = try events.map { try $0.decode((String, String, String, String).self) }
            #expect(rows.map { [$0.0, $0.1] } == [["weight,blood_glucose", ""], ["", "weight"]])
            #expect(rows.allSatisfy { $0.2.hasPrefix("p_") && $0.3 == "user" }, "a pseudonym, never the account")
        }
    }

    @Test("an unknown type, a type named twice or a missing field is a 422 naming each, and changes nothing; a body that is no JSON a 400")
    func badInput() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let bad = try await Self.setSharing(
                harness, [("weight", false), ("telepathy", false), ("heart_rate", false), ("weight", true)], token: parties.person)
            #expect(bad.status == .unprocessableContent)
            #expect(bad.headers[.contentType] == "application/problem+json")
            #expect(try harness.errorFields(bad) == ["types[1].type", "types[3].type"])
            #expect(try await Self.sharing(harness, token: parties.person).settings.values.allSatisfy { $0 }, "nothing changed")
            let shapeless = try await harness.request(.put, "/v1/me/sharing", json: #"{"types":[{"type":"weight"}]}"#, token: parties.person)
            #expect(shapeless.status == .unprocessableContent)
            #expect(try harness.errorFields(shapeless) == ["types[0].shared"])
            let notJSON = try await harness.request(.put, "/v1/me/sharing", json: #"{"types":[{"type":"weight","#, token: parties.person)
            #expect(notJSON.status == .badRequest)
            #expect(try await harness.int("SELECT count(*) FROM unshared_types") == 0)
            #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action = 'sharing.changed'") == 0)
        }
    }

    @Test("only people have sharing preferences: a company and an auditor get 403, through HTTP and from the service")
    func onlyPeople() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let auditor = try await harness.activeAuditor()
            for token in [parties.company, auditor] {
                #expect(try await harness.request(.get, "/v1/me/sharing", token: token).status == .forbidden)
                #expect(try await Self.setSharing(harness, [("weight", false)], token: token).status == .forbidden)
            }
            #expect(try await harness.request(.get, "/v1/me/sharing").status == .unauthorized)
            #expect(try await harness.int("SELECT count(*) FROM unshared_types") == 0)
        }
        try await RoleRuleTests.withServices { services in
            let logger = TestDatabase.logger
            let others = [RoleRuleTests.company, RoleRuleTests.auditor]
            await RoleRuleTests.expectOnly(RoleRuleTests.person, refusing: others, "reading sharing preferences") {
                _ = try await services.sharing.preferences(of: $0, logger: logger)
            }
            await RoleRuleTests.expectOnly(RoleRuleTests.person, refusing: others, "changing sharing preferences") {
                _ = try await services.sharing.update([.init(type: .value(.weight), shared: false)], by: $0, logger: logger)
            }
        }
    }

    @Test("the grant check reads the person's unshared types, and an erased account takes its preferences with it")
    func unsharedTypesForTheGrantCheck() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await Self.unshare(harness, ["weight", "vo2_max"], token: parties.person)
            let person = try #require(UUID(uuidString: parties.personID))
            let unshared = try await TestDatabase.withClient(harness.databaseURL) { client in
                try await client.withConnection { try await SharingPreferenceStore.unsharedTypes(of: person, on: $0, logger: TestDatabase.logger) }
            }
            #expect(unshared == [.weight, .vo2Max])
            _ = try await harness.sql("DELETE FROM accounts WHERE id = '\(parties.personID)'")
            #expect(try await harness.int("SELECT count(*) FROM unshared_types") == 0)
        }
    }

    // MARK: Downloads (attacks)

    @Test("a granted type the person stopped sharing is in no download: JSON, CSV, availableTypes; a request for only it has no data")
    func downloadsLeaveItOut() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let upload = try await harness.upload(
                [("heart_rate", 61, "2026-03-01T08:00:00Z"), ("weight", 70.1, "2026-03-01T09:00:00Z"), ("weight", 70.3, "2026-03-02T09:00:00Z")],
                token: parties.person)
            #expect(upload.status == .ok)
            let both = try await harness.acceptedRequestID(parties, types: ["heart_rate", "weight"])
            let onlyWeight = try await harness.acceptedRequestID(parties, types: ["weight"])
            #expect(try await harness.download(both, token: parties.company).items.count == 3, "before: everything granted")

            try await Self.unshare(harness, ["weight"], token: parties.person)
            let json = try await harness.download(both, token: parties.company)
            #expect(json.items.map(\.type) == ["heart_rate"])
            #expect(json.availableTypes == ["heart_rate"])
            let csv = try await harness.request(.get, "/v1/single-requests/\(both)/data?format=csv", token: parties.company)
            #expect(csv.status == .ok)
            #expect(
                harness.text(csv).split(separator: "\r\n").map(String.init) == ["type,at,value,unit", "heart_rate,2026-03-01T08:00:00Z,61,beats/min"])
            let none = try await harness.request(.get, "/v1/single-requests/\(onlyWeight)/data", token: parties.company)
            #expect(none.status == .conflict)
            #expect(try harness.object(none)["type"] as? String == "https://data4help.example/problems/no-requested-data")
            // The person's access log names what was released, not the unshared type that was granted.
            let log = try harness.object(try await harness.request(.get, "/v1/me/access-log", token: parties.person))
            #expect((log["items"] as? [[String: Any]])?.first?["types"] as? [String] == ["heart_rate"])

            // Shared again: released again (the preference stops releases, it does not delete data).
            #expect(try await Self.setSharing(harness, [("weight", true)], token: parties.person).status == .ok)
            #expect(try await harness.download(both, token: parties.company).items.count == 3)
        }
    }

    @Test("a cursor replayed after the preference changed releases nothing of the type, and its uploads move no cursor")
    func cursorReplay() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await harness.upload(
                [("heart_rate", 60, TestHarness.time(minutes: 0)), ("weight", 70, TestHarness.time(minutes: 1))], token: parties.person)
            let id = try await harness.acceptedRequestID(parties, types: ["heart_rate", "weight"], subscriptionDays: 30)
            let first = try await harness.download(id, token: parties.company)
            #expect(first.items.count == 2)

            try await harness.upload(
                [("heart_rate", 61, TestHarness.time(minutes: 2)), ("weight", 71, TestHarness.time(minutes: 3))], token: parties.person)
            try await Self.unshare(harness, ["weight"], token: parties.person)
            let replay = try await harness.download(id, cursor: first.nextCursor, token: parties.company)
            #expect(replay.items.map(\.type) == ["heart_rate"])
            #expect(replay.items.map(\.value) == [61])
            #expect(try await harness.download(id, token: parties.company).items.map(\.type) == ["heart_rate", "heart_rate"])

            // Uploads of only the unshared type: the cursor does not move, so it does not tell the company of them.
            try await harness.upload([("weight", 72, TestHarness.time(minutes: 4))], token: parties.person)
            let after = try await harness.download(id, cursor: replay.nextCursor, token: parties.company)
            #expect(after.items.isEmpty)
            #expect(after.nextCursor == replay.nextCursor)
        }
    }

    @Test("a preference saved while a download streams: none of the type's rows read after it are released")
    func preferenceRacingADownload() async throws {
        // The stream waits on the reader while the preference is saved; on a loaded machine that can take
        // longer than the production stall timeout, after which the server would drop the download.
        try await TestHarness.run(configure: { $0.downloadStallTimeout = 600 }) { harness in
            let parties = try await harness.requestParties()
            // Heart rate and steps alternating by arrival: every chunk of the download holds both.
            let rows = 200_000
            _ = try await harness.sql(
                """
                INSERT INTO samples (user_id, type, at, value, arrival)
                SELECT '\(parties.personID)', CASE WHEN g % 2 = 0 THEN 5 ELSE 1 END,
                       timestamptz '2026-01-01 00:00:00+00' + g * interval '10 seconds', 70, g
                FROM generate_series(1, \(rows)) g
                """)
            _ = try await harness.sql("INSERT INTO sample_arrivals (user_id, last_arrival) VALUES ('\(parties.personID)', \(rows))")
            let id = try await harness.acceptedRequestID(parties, types: ["heart_rate", "step_count"])
            let port = try #require(harness.client.port)
            let path = "/v1/single-requests/\(id)/data?format=csv"
            let stream = try await onOwnThread {
                try StreamingRead(port: port, path: path, token: parties.company, firstBytes: 16 * 1024)
            }
            // The download has begun and waits for the reader: the person stops sharing steps now.
            try await Self.unshare(harness, ["step_count"], token: parties.person)
            let body = try await onOwnThread { try stream.readToEnd() }
            let types = body.split(separator: "\r\n").dropFirst().map { $0.prefix { $0 != "," } }
            let steps = types.filter { $0 == "step_count" }.count
            #expect(types.count - steps == rows / 2, "every shared row is released")
            #expect(steps < rows / 2, "steps read after the preference was saved were released")
            // What was released of steps is what chunks read before the preference: alternating rows up to
            // a point, then heart rates only.
            let expected = (0..<types.count).map { $0 < 2 * steps && $0 % 2 == 1 ? "step_count" : "heart_rate" }
            #expect(types.map(String.init) == expected)
        }
    }

    @Test("an upload of only unshared types is announced to no subscriber; one with a shared type still is")
    func webhookAnnouncesNoUnsharedUpload() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestHarness.run(configure: WebhookFixtures.fast) { harness in
                let parties = try await harness.requestParties()
                let registered = try await harness.request(
                    .put, "/v1/webhook", json: #"{"url":"\#(receiver.url("sharing"))","secret":"\#(WebhookFixtures.secret)"}"#,
                    token: parties.company)
                #expect(registered.status == .ok)
                let id = try await harness.acceptedRequestID(parties, types: ["heart_rate", "weight"], subscriptionDays: 30)
                try await Self.unshare(harness, ["weight"], token: parties.person)
                // A first shared sample, announced, and downloaded: the company's cursor stands after it.
                try await harness.upload([("heart_rate", 59, TestHarness.time(minutes: 10))], token: parties.person)
                let start = try await harness.download(id, token: parties.company).nextCursor
                let announced = "SELECT count(*) FROM webhook_events WHERE request_id = '\(id)' AND type = 'subscription.data_available'"
                #expect(try await harness.int(announced) == 1)
                // Delivered, so that the next announcement is an event of its own rather than folded into it.
                #expect(await eventually { try await harness.int(announced + " AND status = 'delivered'") == 1 })

                try await harness.upload([("weight", 70, TestHarness.time(minutes: 0))], token: parties.person)
                #expect(try await harness.int(announced) == 1, "an upload of only an unshared type was announced")

                try await harness.upload(
                    [("weight", 71, TestHarness.time(minutes: 1)), ("heart_rate", 60, TestHarness.time(minutes: 2))], token: parties.person)
                #expect(try await harness.int(announced) == 2)
                // Its cursor releases the shared sample only. It is where the company stood before both uploads:
                // the unshared samples stored meanwhile do not move it (they would tell the company of them).
                let event = try #require(
                    try await harness.queuedEvents(where: "request_id = '\(id)' AND type = 'subscription.data_available'").last?.cursor)
                #expect(event == start)
                let fresh = try await harness.download(id, cursor: event, token: parties.company)
                #expect(fresh.items.map(\.type) == ["heart_rate"])
            }
        }
    }

    // MARK: Group and peer cells (attack)

    /// The exact figures of one cell, as the mechanism receives them.
    struct Exact: Equatable {
        var bucket: String
        var people: Int64
        var centredSum: Int64
        var bins: [Int64]
        init(_ cell: CellAggregate) { (bucket, people, centredSum, bins) = (cell.bucketStart, cell.people, cell.centredSum, cell.bins) }
    }

    /// What a group evaluation and the peer statistics compute inside the database, before any noise.
    struct Evaluation: Equatable {
        var everyone: [Int32]
        var highHeartRate: [Int32]
        var heartRate: [Exact]
        var steps: [Exact]
        var peerHeartRate: [Exact]
    }

    static func evaluate(_ harness: TestHarness) async throws -> Evaluation {
        try await TestDatabase.withClient(harness.databaseURL) { client in
            try await client.withConnection { connection in
                let logger = TestDatabase.logger
                let from = try #require(CalendarDate(iso: "2026-03-01"))
                let to = try #require(CalendarDate(iso: "2026-03-02"))
                let anyone = GroupRequest.Demographics(ageMin: nil, ageMax: nil, sex: nil)
                let everyone = try await GroupCohortStore.cohort(
                    filters: [], demographics: anyone, from: from, to: to, excludingBlocksOf: nil, on: connection, logger: logger)
                let high = try await GroupCohortStore.cohort(
                    filters: [.init(type: .heartRate, min: 100, max: nil)], demographics: anyone, from: from, to: to, excludingBlocksOf: nil,
                    on: connection, logger: logger)
                func cells(_ type: SampleType) async throws -> [Exact] {
                    try await CellAggregateStore.groupCells(
                        cohort: everyone, type: type, bucket: .day, from: from, to: to, on: connection, logger: logger
                    ).map(Exact.init)
                }
                let peers = try await PeerCellStore.exactCells(month: from, type: .heartRate, on: connection, logger: logger)
                return Evaluation(
                    everyone: everyone, highHeartRate: high, heartRate: try await cells(.heartRate), steps: try await cells(.stepCount),
                    peerHeartRate: peers.map { Exact($0.aggregate) })
            }
        }
    }

    @Test("an unshared type selects the person by no filter and moves no group or peer cell: the exact aggregates equal those without their data")
    func groupCellsLeaveItOut() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let parties = try await harness.requestParties()
            // A heart rate no one else has, and steps.
            let upload = try await harness.upload(
                [
                    ("heart_rate", 130, "2026-03-01T08:00:00Z"), ("heart_rate", 128, "2026-03-02T08:00:00Z"),
                    ("step_count", 12000, "2026-03-01T20:00:00Z"),
                ],
                token: parties.person)
            #expect(upload.status == .ok)
            let number = try await harness.int("SELECT person_number FROM users WHERE account_id = '\(parties.personID)'")

            let shared = try await Self.evaluate(harness)
            #expect(shared.highHeartRate == [Int32(number)], "the person's heart rate selects them while shared")

            try await Self.unshare(harness, ["heart_rate"], token: parties.person)
            let unshared = try await Self.evaluate(harness)

            // The same person without any heart rate: what the unshared evaluation must equal.
            _ = try await harness.sql("DELETE FROM samples WHERE user_id = '\(parties.personID)' AND type = 1")
            _ = try await harness.sql("DELETE FROM daily_rollups WHERE user_id = '\(parties.personID)' AND type = 1")
            #expect(try await Self.setSharing(harness, [("heart_rate", true)], token: parties.person).status == .ok)
            let withoutData = try await Self.evaluate(harness)

            #expect(unshared == withoutData)
            #expect(unshared.highHeartRate.isEmpty)
            #expect(unshared.everyone.contains(Int32(number)), "no filter on the type: still a member, contributing its shared types")
            #expect(unshared.heartRate != shared.heartRate, "the person's heart rate moves the cells when shared (else this test proves nothing)")
            #expect(unshared.peerHeartRate != shared.peerHeartRate)
            #expect(unshared.steps == shared.steps, "only the unshared type is left out")
        }
    }

    // MARK: Console

    @Test("the console's sharing page lists every type, saves the unchecked ones as unshared (CSRF as every form), and the API agrees")
    func consolePage() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let browser = try await ConsoleBrowser.person(harness, parties)
            #expect(browser.lastPage.contains(#"href="/sharing""#))
            try await browser.get("/sharing")
            #expect(browser.lastPage.contains("types you never share with any company"))
            for type in SampleType.allCases {
                #expect(browser.lastPage.contains(#"id="shared-\#(type.rawValue)" name="shared" type="checkbox" value="\#(type.rawValue)" checked"#))
            }

            let every = SampleType.allCases.map { ("types", $0.rawValue) }
            let keep = SampleType.allCases.filter { $0 != .weight && $0 != .bloodGlucose }.map { ("shared", $0.rawValue) }
            #expect(try await browser.post("/sharing", every + keep, csrf: .none).status == .forbidden)
            #expect(try await harness.int("SELECT count(*) FROM unshared_types") == 0)
            try await browser.get("/sharing")
            let saved = try await browser.post("/sharing", every + keep)
            #expect(saved.status == .seeOther || saved.status == .found)
            #expect(
                try await Self.sharing(harness, token: parties.person).settings.filter { !$0.value }.keys.sorted() == ["blood_glucose", "weight"])
            try await browser.get("/sharing")
            #expect(!browser.lastPage.contains(#"value="weight" checked"#))
            #expect(browser.lastPage.contains(#"value="heart_rate" checked"#))
            #expect(browser.lastPage.contains("not shared since"))

            let company = ConsoleBrowser(harness)
            _ = try await company.logIn(try #require(try await Self.companyEmail(harness, parties)), TestHarness.Company().password)
            #expect(try await company.get("/sharing").status == .forbidden)
        }
    }

    static func companyEmail(_ harness: TestHarness, _ parties: RequestParties) async throws -> String? {
        try await harness.sql("SELECT email FROM accounts WHERE id = '\(parties.companyID)'").first?.decode(String.self)
    }
}

/// A download read through a socket of its own with a small receive buffer: the first bytes, then (after
/// whatever the test does meanwhile) the rest, as the body with the chunked framing removed.
struct StreamingRead: Sendable {
    let socketFD: Int32
    let head: [UInt8]

    init(port: Int, path: String, token: String, firstBytes: Int) throws {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw POSIXError(.EIO) }
        var small: Int32 = 4096
        setsockopt(socketFD, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 300, tv_usec: 0)
        setsockopt(socketFD, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socketFD)
            throw POSIXError(.ECONNREFUSED)
        }
        let request = "GET \(path) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n"
        _ = request.withCString { send(socketFD, $0, strlen($0), 0) }
        var read: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while read.count < firstBytes {
            let count = recv(socketFD, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            read += buffer[0..<count]
        }
        self.socketFD = socketFD
        head = read
    }

    /// Reads until the server closes the connection, closes the socket, and answers the body.
    func readToEnd() throws -> String {
        defer { close(socketFD) }
        var all = head
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = recv(socketFD, &buffer, buffer.count, 0)
            if count < 0 { throw StreamingReadStopped(bytesRead: all.count) }
            if count == 0 { break }
            all += buffer[0..<count]
        }
        let text = String(decoding: all, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return "" }
        return Self.unchunked(String(text[split.upperBound...]))
    }

    /// A chunked body's data: each chunk is its size in hex, CRLF, the data, CRLF; a size of 0 ends it.
    static func unchunked(_ framed: String) -> String {
        var bytes = Array(framed.utf8)[...]
        var body: [UInt8] = []
        while let end = bytes.firstIndex(of: UInt8(ascii: "\r")) {
            let sizeText = String(decoding: bytes[bytes.startIndex..<end], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size > 0 else { break }
            let start = end + 2
            guard start + size <= bytes.endIndex else { break }
            body += bytes[start..<start + size]
            bytes = bytes[(start + size + 2)...]
        }
        return String(decoding: body, as: UTF8.self)
    }
}

/// The server sent nothing more for the socket's timeout, after `bytesRead` bytes.
struct StreamingReadStopped: Error {
    var bytesRead: Int
}
