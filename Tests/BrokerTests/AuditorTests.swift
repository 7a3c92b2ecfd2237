import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// What auditors can and cannot see, the audit log's export and its verification, and the role walls.
@Suite("Auditors", .serialized)
struct AuditorTests {
    /// Six people with heart rate, an accepted group request and an accepted single request.
    struct World: Sendable {
        var company: String
        var auditor: String
        var person: String
        var groupRequestID: String
        var singleRequestID: String
        var identities: [String]
    }

    func world(_ harness: TestHarness) async throws -> World {
        let parties = try await harness.requestParties()
        try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: parties.person)
        let ids = try await GroupFixtures.populate(harness, (0..<5).map { _ in GroupFixtures.Member(heartRate: [1: [70]]) })
        let single = try await harness.acceptedRequestID(parties)
        let created = try await harness.request(
            .post, "/v1/group-requests",
            json:
                #"{"types":["heart_rate"],"filters":[{"type":"heart_rate","min":0,"max":300}],"window":{"from":"2026-03-01","to":"2026-03-01"},"bucket":"day","purposeCode":"HRESCH","purpose":"Study"}"#,
            token: parties.company)
        try #require(created.status == .created)
        let group = try #require(try harness.object(created)["id"] as? String)
        let fiscalCodes = try await harness.sql("SELECT fiscal_code || ' ' || full_name || ' ' || account_id::text FROM users")
        let identities =
            try fiscalCodes.map { try $0.decode(String.self) }.flatMap { $0.split(separator: " ").map(String.init) }
            + [parties.personEmail, parties.personID] + ids.map { $0.uuidString.lowercased() }
        return World(
            company: parties.company, auditor: try await harness.activeAuditor(), person: parties.person,
            groupRequestID: group, singleRequestID: single, identities: identities.filter { $0.count > 3 && $0 != "Peer" })
    }

    @Test("auditors see every group request and exactly the released results, byte for byte, and no identity")
    func groupRequests() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            let world = try await world(harness)
            let list = try await harness.request(.get, "/v1/audit/group-requests", token: world.auditor)
            #expect(list.status == .ok)
            #expect((try harness.object(list)["items"] as? [[String: Any]])?.first?["id"] as? String == world.groupRequestID)
            for format in ["", "?format=csv"] {
                let sent = try await harness.request(.get, "/v1/group-requests/\(world.groupRequestID)/results\(format)", token: world.company)
                let audited = try await harness.request(
                    .get, "/v1/audit/group-requests/\(world.groupRequestID)/results\(format)", token: world.auditor)
                #expect(sent.status == .ok && audited.status == .ok)
                #expect(sent.body == audited.body, "\(format)")
            }
            let bodies = [
                harness.text(list),
                harness.text(try await harness.request(.get, "/v1/audit/group-requests/\(world.groupRequestID)/results", token: world.auditor)),
                harness.text(try await harness.request(.get, "/v1/audit/events?limit=1000", token: world.auditor)),
                harness.text(try await harness.request(.get, "/v1/audit/events?format=csv", token: world.auditor)),
                harness.text(try await harness.request(.get, "/v1/audit/privacy-ledger", token: world.auditor)),
                harness.text(try await harness.request(.get, "/v1/group-requests/\(world.groupRequestID)", token: world.company)),
                harness.text(try await harness.request(.get, "/v1/group-requests/\(world.groupRequestID)/results?format=csv", token: world.company)),
            ]
            for body in bodies {
                for identity in world.identities { #expect(!body.contains(identity), "\(identity) leaked") }
            }
        }
    }

    @Test("the audit log as JSON pages and CSV, filtered by action and time, people only as pseudonyms")
    func events() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            let world = try await world(harness)
            let page = try harness.object(try await harness.request(.get, "/v1/audit/events?limit=2", token: world.auditor))
            let items = try #require(page["items"] as? [[String: Any]])
            #expect(items.map { $0["seq"] as? Int } == [1, 2])
            let next = try #require(page["nextCursor"] as? String)
            let second = try harness.object(try await harness.request(.get, "/v1/audit/events?limit=2&cursor=\(next)", token: world.auditor))
            #expect((second["items"] as? [[String: Any]])?.first?["seq"] as? Int == 3)

            let accepted = try harness.object(
                try await harness.request(
                    .get, "/v1/audit/events?action=single_request.accepted", token: world.auditor))
            let event = try #require((accepted["items"] as? [[String: Any]])?.first)
            #expect(event["requestId"] as? String == world.singleRequestID)
            #expect((event["subject"] as? String)?.hasPrefix("p_") == true)
            #expect((event["actor"] as? [String: Any])?["role"] as? String == "user")
            #expect((event["hash"] as? String)?.count == 64)

            let future = try harness.object(try await harness.request(.get, "/v1/audit/events?from=2100-01-01T00:00:00Z", token: world.auditor))
            #expect((future["items"] as? [Any])?.isEmpty == true)
            #expect(try await harness.request(.get, "/v1/audit/events?from=yesterday", token: world.auditor).status == .unprocessableContent)

            let csv = try await harness.request(.get, "/v1/audit/events?format=csv&action=group_request.results_released", token: world.auditor)
            #expect(csv.headers[.contentType]?.hasPrefix("text/csv") == true)
            let lines = harness.text(csv).split(separator: "\r\n")
            #expect(lines.first == "seq,at,actor_id,actor_role,action,request_id,subject,details,prev_hash,hash")
            #expect(lines.count == 2)
            #expect(lines.last?.contains(world.groupRequestID) == true)
        }
    }

    @Test("verification: a valid chain, then a tampered row is found by the API and by d4h audit verify")
    func verification() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            let world = try await world(harness)
            let valid = try harness.object(try await harness.request(.get, "/v1/audit/verification", token: world.auditor))
            #expect(valid["valid"] as? Bool == true)
            let events = try #require(valid["events"] as? Int)
            #expect(events == (try await harness.int("SELECT count(*) FROM audit_events")))
            let cli = try await D4HCommand.run(["audit", "verify"], environment: ["DATABASE_URL": harness.databaseURL.text])
            #expect(cli.status == 0, "\(cli.output)")
            #expect(cli.output.contains("\(events) events"))

            // Someone who owns the database switches off the log's refusal of changes and edits an old event's details in place.
            _ = try await harness.sql("ALTER TABLE audit_events DISABLE TRIGGER USER")
            _ = try await harness.sql("UPDATE audit_events SET details = '{\"rows\": 0}' WHERE seq = 4")
            let broken = try harness.object(try await harness.request(.get, "/v1/audit/verification", token: world.auditor))
            #expect(broken["valid"] as? Bool == false)
            #expect(broken["brokenAt"] as? Int == 4)
            let failed = try await D4HCommand.run(["audit", "verify"], environment: ["DATABASE_URL": harness.databaseURL.text])
            #expect(failed.status != 0)
            #expect(failed.output.contains("sequence number 4"))

            // Recomputing that row's hash moves the break to the next row, whose link no longer matches.
            _ = try await harness.sql(
                """
                UPDATE audit_events SET hash = sha256(prev_hash || audit_event_canonical(seq, at, actor_id, actor_role, action, request_id, subject, details))
                WHERE seq = 4
                """)
            let relinked = try harness.object(try await harness.request(.get, "/v1/audit/verification", token: world.auditor))
            #expect(relinked["brokenAt"] as? Int == 5)
        }
    }

    @Test("role walls: auditors reach no single-request data and no write; companies see only their own; people no group data")
    func roleWalls() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            let world = try await world(harness)
            var other = TestHarness.Company()
            other.vatNumber = TestHarness.uniqueVATNumber()
            let otherCompany = try await harness.activeCompany(other)
            let auditorForbidden: [(HTTPRequest.Method, String)] = [
                (.get, "/v1/single-requests"), (.get, "/v1/single-requests/\(world.singleRequestID)"),
                (.get, "/v1/single-requests/\(world.singleRequestID)/data"), (.post, "/v1/single-requests/\(world.singleRequestID)/accept"),
                (.post, "/v1/single-requests/\(world.singleRequestID)/cancel"),
                (.delete, "/v1/single-requests/\(world.singleRequestID)/subscription"),
                (.get, "/v1/group-requests"), (.get, "/v1/group-requests/\(world.groupRequestID)"),
                (.get, "/v1/group-requests/\(world.groupRequestID)/results"), (.delete, "/v1/group-requests/\(world.groupRequestID)/subscription"),
                (.get, "/v1/me/samples"), (.get, "/v1/me/access-log"), (.get, "/v1/me/blocks"), (.get, "/v1/webhook"),
                (.post, "/v1/api-keys"),
            ]
            for (method, path) in auditorForbidden {
                let response = try await harness.request(method, path, json: method == .post ? "{}" : nil, token: world.auditor)
                #expect(response.status == .forbidden || response.status == .unprocessableContent, "\(method) \(path): \(response.status)")
                #expect(response.status != .ok)
            }
            let writes = try await harness.request(
                .post, "/v1/group-requests",
                json:
                    #"{"types":["heart_rate"],"demographics":{"sex":"F"},"window":{"from":"2026-03-01","to":"2026-03-01"},"bucket":"day","purposeCode":"HRESCH","purpose":"x"}"#,
                token: world.auditor)
            #expect(writes.status == .forbidden)

            for path in [
                "/v1/audit/group-requests", "/v1/audit/events", "/v1/audit/verification",
                "/v1/audit/group-requests/\(world.groupRequestID)/results",
            ] {
                #expect(try await harness.request(.get, path, token: world.company).status == .forbidden, "\(path)")
                #expect(try await harness.request(.get, path, token: world.person).status == .forbidden, "\(path)")
                #expect(try await harness.request(.get, path).status == .unauthorized, "\(path)")
            }
            for path in ["/v1/group-requests/\(world.groupRequestID)", "/v1/group-requests/\(world.groupRequestID)/results"] {
                #expect(try await harness.request(.get, path, token: otherCompany).status == .notFound, "\(path)")
            }
            #expect(
                try await harness.request(.delete, "/v1/group-requests/\(world.groupRequestID)/subscription", token: otherCompany).status == .notFound
            )
            let otherList = try harness.object(try await harness.request(.get, "/v1/group-requests", token: otherCompany))
            #expect((otherList["items"] as? [Any])?.isEmpty == true)
            #expect(try await harness.request(.get, "/v1/group-requests", token: world.person).status == .forbidden)
            #expect(try await harness.request(.get, "/v1/audit/group-requests/\(UUID())/results", token: world.auditor).status == .notFound)
        }
    }
}
