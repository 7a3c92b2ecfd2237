import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Blocks, erasure's effect on requests, the export, and the webhook events the request lifecycle queues.
@Suite("Blocks, erasure and the request outbox", .serialized)
struct TransparencyTests {
    @Test("blocking refuses the company's pending requests and its new ones reach nobody; unblocking allows them again")
    func blocks() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let pending = try await harness.sentRequestID(parties)
            let blocked = try await harness.request(.put, "/v1/me/blocks/\(parties.companyID)", token: parties.person)
            #expect(blocked.status == .ok)
            #expect((try harness.object(blocked)["thirdParty"] as? [String: Any])?["id"] as? String == parties.companyID)
            #expect(try await harness.request(.put, "/v1/me/blocks/\(parties.companyID)", token: parties.person).status == .ok)

            // Refused for the person; for the company, pending as a request to nobody is (issue 17).
            let request = try harness.object(try await harness.request(.get, "/v1/single-requests/\(pending)", token: parties.person))
            #expect(request["status"] as? String == "refused")
            let seen = try harness.object(try await harness.request(.get, "/v1/single-requests/\(pending)", token: parties.company))
            #expect(seen["status"] as? String == "pending")
            // The company is not told it is blocked (that would tell it the person exists): once it has
            // cancelled what it sees as pending, its new request is answered as usual and reaches nobody.
            #expect(try await harness.request(.post, "/v1/single-requests/\(pending)/cancel", token: parties.company).status == .ok)
            let whileBlocked = try await harness.sendRequest(parties)
            #expect(whileBlocked.status == .created)
            let unseen = try #require(try harness.object(whileBlocked)["id"] as? String)
            #expect(try await harness.request(.get, "/v1/single-requests/\(unseen)", token: parties.person).status == .notFound)
            let inbox = try harness.object(try await harness.request(.get, "/v1/single-requests", token: parties.person))
            #expect((inbox["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [pending])

            let list = try harness.object(try await harness.request(.get, "/v1/me/blocks", token: parties.person))
            #expect((list["items"] as? [[String: Any]])?.count == 1)
            #expect(try await harness.request(.put, "/v1/me/blocks/\(UUID())", token: parties.person).status == .notFound)
            #expect(try await harness.request(.put, "/v1/me/blocks/\(parties.personID)", token: parties.person).status == .notFound)
            #expect(try await harness.request(.put, "/v1/me/blocks/\(parties.companyID)", token: parties.company).status == .forbidden)

            #expect(try await harness.request(.delete, "/v1/me/blocks/\(parties.companyID)", token: parties.person).status == .noContent)
            #expect(try await harness.request(.delete, "/v1/me/blocks/\(parties.companyID)", token: parties.person).status == .notFound)
            // The request sent while blocked is still pending for the company (as any unanswered one).
            #expect(try await harness.sendRequest(parties).status == .conflict)
            #expect(try await harness.request(.post, "/v1/single-requests/\(unseen)/cancel", token: parties.company).status == .ok)
            #expect(try await harness.sendRequest(parties).status == .created)
            let actions = try await harness.sql("SELECT action FROM audit_events WHERE action LIKE 'block.%' ORDER BY seq")
            #expect(try actions.map { try $0.decode(String.self) } == ["block.added", "block.added", "block.removed"])
        }
    }

    @Test("erasure refuses pending requests, ends subscriptions by the user, and clears the subject")
    func erasure() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: parties.person)
            let subscription = try await harness.acceptedRequestID(parties, subscriptionDays: 30)
            var other = TestHarness.Company()
            other.vatNumber = TestHarness.uniqueVATNumber()
            let otherToken = try await harness.activeCompany(other)
            let pending = try await harness.request(
                .post, "/v1/single-requests",
                json: #"{"subject":{"email":"\#(parties.personEmail)"},"types":["weight"],"purposeCode":"HRESCH","purpose":"x"}"#,
                token: otherToken)
            let pendingID = try #require(try harness.object(pending)["id"] as? String)
            _ = try await harness.sql(
                "INSERT INTO webhooks (third_party_id, url, secret) VALUES ('\(parties.companyID)', 'https://hooks.example.com/d4h', 'a-secret-of-16-chars')"
            )

            let erased = try await harness.request(
                .delete, "/v1/me", json: #"{"password":"correct-horse-battery"}"#, token: parties.person)
            #expect(erased.status == .noContent)

            let ended = try harness.object(try await harness.request(.get, "/v1/single-requests/\(subscription)", token: parties.company))
            let state = try #require(ended["subscription"] as? [String: Any])
            #expect(state["status"] as? String == "ended")
            #expect(state["endedBy"] as? String == "user")
            #expect((ended["subject"] as? [String: Any])?.isEmpty == true)
            // Refused, unseen by its sender (issue 17): pending to it until it expires, as one to nobody.
            let refused = try harness.object(try await harness.request(.get, "/v1/single-requests/\(pendingID)", token: otherToken))
            #expect(refused["status"] as? String == "pending")
            #expect(try await harness.sql("SELECT status FROM single_requests WHERE id = '\(pendingID)'").first?.decode(String.self) == "refused")
            let download = try await harness.request(.get, "/v1/single-requests/\(subscription)/data", token: parties.company)
            #expect(download.status == .conflict)

            let events = try await harness.sql(
                "SELECT type, data->>'endedBy', data->>'reason' FROM webhook_events WHERE request_id = '\(subscription)'")
            let decoded = try events.map { try $0.decode((String, String?, String?).self) }
            #expect(decoded.contains { $0.0 == "subscription.ended" && $0.1 == "user" && $0.2 == "revoked" })
            // Cleared everywhere but on the request its sender is still shown as pending (issue 17): that one
            // keeps the subject as typed, as a request to nobody does, and no longer names the person.
            let kept = try await harness.sql(
                "SELECT id::text FROM single_requests WHERE subject_email IS NOT NULL OR subject_fiscal_code IS NOT NULL")
            #expect(try kept.map { try $0.decode(String.self) } == [pendingID])
            #expect(try await harness.int("SELECT count(*) FROM single_requests WHERE id = '\(pendingID)' AND user_id IS NULL") == 1)
        }
    }

    @Test("the lifecycle queues webhook events in its own transaction: accepted, then one coalesced data_available, none for other types")
    func outbox() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            _ = try await harness.sql(
                "INSERT INTO webhooks (third_party_id, url, secret) VALUES ('\(parties.companyID)', 'https://hooks.example.com/d4h', 'a-secret-of-16-chars')"
            )
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: parties.person)
            let id = try await harness.acceptedRequestID(parties, subscriptionDays: 30)
            try await harness.uploadHeartRates([TestHarness.time(minutes: 1)], token: parties.person)
            try await harness.uploadHeartRates([TestHarness.time(minutes: 2)], token: parties.person)  // coalesced
            let upload = try await harness.upload([("weight", 70, TestHarness.time(minutes: 3))], token: parties.person)
            #expect(upload.status == .ok)  // a type the subscription does not cover: no event

            let events = try await harness.queuedEvents(where: "request_id = '\(id)'")
            #expect(events.map(\.type) == ["single_request.accepted", "subscription.data_available"])
            let cursor = try #require(events.last?.cursor)
            let delivered = try await harness.download(id, cursor: cursor, token: parties.company)
            #expect(delivered.items.map(\.value) == [60, 60])

            _ = try await harness.sql("UPDATE single_requests SET ends_at = now() - interval '1 second' WHERE id = '\(id)'")
            let announced = try await harness.int(
                "SELECT count(*) FROM webhook_events WHERE request_id = '\(id)' AND type = 'subscription.ended'")
            #expect(announced == 0)
        }
    }

    @Test("announcing expiries queues one subscription.ended (expired) per subscription, once")
    func expiryAnnouncement() async throws {
        try await TestDatabase.withMigratedDatabase { url in
            try await TestHarness.run(databaseURL: url) { harness in
                let parties = try await harness.requestParties()
                _ = try await harness.sql(
                    "INSERT INTO webhooks (third_party_id, url, secret) VALUES ('\(parties.companyID)', 'https://hooks.example.com/d4h', 'a-secret-of-16-chars')"
                )
                let id = try await harness.acceptedRequestID(parties, subscriptionDays: 2)
                _ = try await harness.sql("UPDATE single_requests SET ends_at = now() - interval '1 second' WHERE id = '\(id)'")
                try await TestDatabase.withClient(url) { client in
                    let service = SingleRequestService(client: client, pseudonymizer: Pseudonymizer(client: client))
                    // Announced once, by this sweep or by the server's own (`sweepRounds`); then never again.
                    let done = "SELECT count(*) FROM single_requests WHERE id = '\(id)' AND expiry_announced"
                    let announced = try await sweepRounds(until: { try await harness.int(done) == 1 }) {
                        try await service.announceExpiries(logger: TestDatabase.logger)
                    }
                    #expect(announced <= 1)
                    #expect(try await service.announceExpiries(logger: TestDatabase.logger) == 0)
                }
                let rows = try await harness.sql(
                    "SELECT data->>'reason' FROM webhook_events WHERE request_id = '\(id)' AND type = 'subscription.ended'")
                #expect(try rows.map { try $0.decode(String.self) } == ["expired"])
                #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action = 'subscription.expired'") == 1)
            }
        }
    }

    @Test("the export holds the profile, samples, requests and access log, streamed as one JSON document")
    func export() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0), TestHarness.time(minutes: 1)], token: parties.person)
            let id = try await harness.acceptedRequestID(parties)
            _ = try await harness.download(id, token: parties.company)

            let export = try await harness.request(.get, "/v1/me/export", token: parties.person)
            #expect(export.status == .ok)
            #expect(export.headers[.contentType] == "application/json; charset=utf-8")
            let body = try harness.object(export)
            #expect((body["profile"] as? [String: Any])?["fiscalCode"] as? String == parties.personFiscalCode)
            #expect((body["samples"] as? [[String: Any]])?.count == 2)
            #expect((body["requests"] as? [[String: Any]])?.first?["id"] as? String == id)
            #expect((body["accessLog"] as? [[String: Any]])?.first?["samples"] as? Int == 2)
            #expect((body["exportedAt"] as? String).flatMap(Timestamp.parse) != nil)

            let company = try harness.object(try await harness.request(.get, "/v1/me/export", token: parties.company))
            #expect((company["requests"] as? [[String: Any]])?.count == 1)
            #expect((company["samples"] as? [Any])?.isEmpty == true)
            #expect((company["accessLog"] as? [Any])?.isEmpty == true)
            #expect(try await harness.request(.get, "/v1/me/export").status == .unauthorized)
        }
    }
}
