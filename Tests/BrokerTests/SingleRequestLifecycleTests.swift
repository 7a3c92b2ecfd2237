import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Sending, deciding, cancelling and ending single requests, with the original backend's cases.
@Suite("Single request lifecycle", .serialized)
struct SingleRequestLifecycleTests {
    @Test("send by email or fiscal code: pending, visible to both sides")
    func send() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let response = try await harness.sendRequest(parties, types: ["heart_rate", "weight"], subscriptionDays: 30)
            #expect(response.status == .created)
            let body = try harness.object(response)
            #expect(body["status"] as? String == "pending")
            #expect(body["types"] as? [String] == ["heart_rate", "weight"])
            #expect((body["subject"] as? [String: Any])?["email"] as? String == parties.personEmail)
            let thirdParty = try #require(body["thirdParty"] as? [String: Any])
            #expect(thirdParty["id"] as? String == parties.companyID)
            #expect(thirdParty["companyName"] as? String == "Cardio Research S.p.A.")
            let subscription = try #require(body["subscription"] as? [String: Any])
            #expect(subscription["days"] as? Int == 30)
            #expect(subscription["status"] as? String == "pending")
            #expect(subscription["endsAt"] == nil)
            let id = try #require(body["id"] as? String)

            for token in [parties.company, parties.person] {
                let fetched = try await harness.request(.get, "/v1/single-requests/\(id)", token: token)
                #expect(fetched.status == .ok)
                #expect(try harness.object(fetched)["id"] as? String == id)
            }

            // By fiscal code, from another company (lower-case input is normalised).
            var other = TestHarness.Company()
            other.vatNumber = TestHarness.uniqueVATNumber()
            let otherToken = try await harness.activeCompany(other)
            let byCode = try await harness.request(
                .post, "/v1/single-requests",
                json:
                    #"{"subject":{"fiscalCode":"\#(parties.personFiscalCode.lowercased())"},"types":["step_count"],"purposeCode":"HRESCH","purpose":"Activity"}"#,
                token: otherToken)
            #expect(byCode.status == .created)
            #expect((try harness.object(byCode)["subject"] as? [String: Any])?["fiscalCode"] as? String == parties.personFiscalCode)
            #expect(try harness.object(byCode)["subscription"] == nil)
        }
    }

    @Test("send: unknown person 201 as for anyone (issue 17), pending duplicate 409, a new request once the first is decided")
    func sendConflicts() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let unknown = try await harness.request(
                .post, "/v1/single-requests",
                json: #"{"subject":{"email":"nobody@example.com"},"types":["heart_rate"],"purposeCode":"HRESCH","purpose":"x"}"#,
                token: parties.company)
            #expect(unknown.status == .created)
            let unknownCode = try await harness.request(
                .post, "/v1/single-requests",
                json: #"{"subject":{"fiscalCode":"\#(TestHarness.uniqueFiscalCode())"},"types":["heart_rate"],"purposeCode":"HRESCH","purpose":"x"}"#,
                token: parties.company)
            #expect(unknownCode.status == .created)

            let first = try await harness.sentRequestID(parties)
            let duplicate = try await harness.sendRequest(parties, types: ["weight"])
            #expect(duplicate.status == .conflict)
            #expect(try harness.object(duplicate)["type"] as? String == "https://data4help.example/problems/duplicate-pending-request")

            let refused = try await harness.request(.post, "/v1/single-requests/\(first)/refuse", token: parties.person)
            #expect(refused.status == .ok)
            // The company still sees it pending (a refusal is not disclosed, issue 17): 409 until it cancels it.
            #expect(try await harness.sendRequest(parties).status == .conflict)
            #expect(try await harness.request(.post, "/v1/single-requests/\(first)/cancel", token: parties.company).status == .ok)
            #expect(try await harness.sendRequest(parties).status == .created)
        }
    }

    @Test("send: invalid bodies answer 422 naming every field, wrong roles 403, nothing stored")
    func sendValidation() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let both = try await harness.request(
                .post, "/v1/single-requests",
                json:
                    #"{"subject":{"email":"\#(parties.personEmail)","fiscalCode":"\#(parties.personFiscalCode)"},"types":[],"purposeCode":"HRESCH","purpose":" ","window":{"from":"yesterday","to":"2026-01-01T00:00:00Z"},"subscription":{"days":0}}"#,
                token: parties.company)
            #expect(both.status == .unprocessableContent)
            #expect(Set(try harness.errorFields(both)) == ["subject", "types", "purpose", "window.from", "subscription.days"])

            let badTypes = try await harness.sendRequest(parties, types: ["heart_rate", "mood", "heart_rate"])
            #expect(badTypes.status == .unprocessableContent)
            #expect(try harness.errorFields(badTypes) == ["types[1]", "types[2]"])

            let reversed = try await harness.sendRequest(
                parties, window: .init(from: "2026-03-02T00:00:00Z", to: "2026-03-01T00:00:00Z"))
            #expect(try harness.errorFields(reversed) == ["window.from"])
            let longPurpose = try await harness.sendRequest(parties, purpose: String(repeating: "x", count: 501))
            #expect(try harness.errorFields(longPurpose) == ["purpose"])
            let tooLong = try await harness.sendRequest(parties, subscriptionDays: 3651)
            #expect(try harness.errorFields(tooLong) == ["subscription.days"])

            let byPerson = try await harness.request(
                .post, "/v1/single-requests",
                json: #"{"subject":{"email":"\#(parties.personEmail)"},"types":["heart_rate"],"purposeCode":"HRESCH","purpose":"x"}"#,
                token: parties.person)
            #expect(byPerson.status == .forbidden)
            let auditor = try await harness.activeAuditor()
            #expect(try await harness.request(.get, "/v1/single-requests", token: auditor).status == .forbidden)
            #expect(
                try await harness.request(
                    .post, "/v1/single-requests",
                    json: #"{"subject":{"email":"\#(parties.personEmail)"},"types":["heart_rate"],"purposeCode":"HRESCH","purpose":"x"}"#
                ).status == .unauthorized)
            #expect(try await harness.int("SELECT count(*) FROM single_requests") == 0)
        }
    }

    @Test("choice: accept, refuse, not pending 409, unknown 404, someone else's 404, wrong role 403")
    func choice() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let id = try await harness.sentRequestID(parties, subscriptionDays: 10)
            #expect(try await harness.request(.post, "/v1/single-requests/\(id)/accept", token: parties.company).status == .forbidden)

            let accepted = try await harness.request(.post, "/v1/single-requests/\(id)/accept", token: parties.person)
            #expect(accepted.status == .ok)
            let body = try harness.object(accepted)
            #expect(body["status"] as? String == "accepted")
            let decidedAt = try #require((body["decidedAt"] as? String).flatMap(Timestamp.parse))
            let subscription = try #require(body["subscription"] as? [String: Any])
            #expect(subscription["status"] as? String == "active")
            let endsAt = try #require((subscription["endsAt"] as? String).flatMap(Timestamp.parse))
            #expect(abs(endsAt.timeIntervalSince(decidedAt) - 10 * 86_400) < 0.001)

            for action in ["accept", "refuse"] {
                let again = try await harness.request(.post, "/v1/single-requests/\(id)/\(action)", token: parties.person)
                #expect(again.status == .conflict)
                #expect(try harness.object(again)["detail"] as? String == "The request is already accepted.")
            }
            #expect(try await harness.request(.post, "/v1/single-requests/\(UUID())/accept", token: parties.person).status == .notFound)
            #expect(try await harness.request(.post, "/v1/single-requests/not-an-id/refuse", token: parties.person).status == .notFound)

            // Another person cannot decide, or even see, this request.
            var stranger = TestHarness.Person()
            stranger.fiscalCode = TestHarness.uniqueFiscalCode()
            let strangerToken = try await harness.activeUser(stranger)
            let second = try await harness.sentRequestID(parties, types: ["weight"])
            for path in ["/v1/single-requests/\(second)/refuse", "/v1/single-requests/\(second)/accept"] {
                #expect(try await harness.request(.post, path, token: strangerToken).status == .notFound)
            }
            #expect(try await harness.request(.get, "/v1/single-requests/\(second)", token: strangerToken).status == .notFound)
            let refused = try await harness.request(.post, "/v1/single-requests/\(second)/refuse", token: parties.person)
            #expect(try harness.object(refused)["status"] as? String == "refused")
            #expect((try harness.object(refused)["subscription"]) == nil)
        }
    }

    @Test("cancel: the sender withdraws a pending request; not pending 409; the person cannot cancel")
    func cancel() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let id = try await harness.sentRequestID(parties)
            #expect(try await harness.request(.post, "/v1/single-requests/\(id)/cancel", token: parties.person).status == .forbidden)
            let cancelled = try await harness.request(.post, "/v1/single-requests/\(id)/cancel", token: parties.company)
            #expect(try harness.object(cancelled)["status"] as? String == "cancelled")
            #expect(try await harness.request(.post, "/v1/single-requests/\(id)/cancel", token: parties.company).status == .conflict)
            #expect(try await harness.request(.post, "/v1/single-requests/\(id)/accept", token: parties.person).status == .conflict)

            var other = TestHarness.Company()
            other.vatNumber = TestHarness.uniqueVATNumber()
            let otherToken = try await harness.activeCompany(other)
            let next = try await harness.sentRequestID(parties)
            #expect(try await harness.request(.post, "/v1/single-requests/\(next)/cancel", token: otherToken).status == .notFound)
        }
    }

    @Test("lists: sent for the company, received for the person, status filter and pages")
    func lists() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let first = try await harness.acceptedRequestID(parties)
            let second = try await harness.sentRequestID(parties, types: ["weight"])
            var other = TestHarness.Company()
            other.vatNumber = TestHarness.uniqueVATNumber()
            let otherToken = try await harness.activeCompany(other)

            for token in [parties.company, parties.person] {
                let all = try harness.object(try await harness.request(.get, "/v1/single-requests", token: token))
                #expect((all["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [second, first])
                let pending = try harness.object(try await harness.request(.get, "/v1/single-requests?status=pending", token: token))
                #expect((pending["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [second])
            }
            let otherList = try harness.object(try await harness.request(.get, "/v1/single-requests", token: otherToken))
            #expect((otherList["items"] as? [Any])?.isEmpty == true)

            let page1 = try harness.object(try await harness.request(.get, "/v1/single-requests?limit=1", token: parties.company))
            #expect((page1["items"] as? [[String: Any]])?.first?["id"] as? String == second)
            let cursor = try #require(page1["nextCursor"] as? String)
            let page2 = try harness.object(try await harness.request(.get, "/v1/single-requests?limit=1&cursor=\(cursor)", token: parties.company))
            #expect((page2["items"] as? [[String: Any]])?.first?["id"] as? String == first)
            #expect(page2["nextCursor"] == nil)
            #expect(try await harness.request(.get, "/v1/single-requests?status=maybe", token: parties.company).status == .unprocessableContent)
            #expect(try await harness.request(.get, "/v1/single-requests?cursor=zzz", token: parties.company).status == .unprocessableContent)
        }
    }

    @Test("end subscription: either side; already ended, not accepted, no subscription 409; not yours 404")
    func endSubscription() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let byUser = try await harness.acceptedRequestID(parties, subscriptionDays: 30)
            let ended = try await harness.request(.delete, "/v1/single-requests/\(byUser)/subscription", token: parties.person)
            #expect(ended.status == .ok)
            let subscription = try #require(try harness.object(ended)["subscription"] as? [String: Any])
            #expect(subscription["status"] as? String == "ended")
            #expect(subscription["endedBy"] as? String == "user")
            #expect(subscription["endedAt"] is String)
            let again = try await harness.request(.delete, "/v1/single-requests/\(byUser)/subscription", token: parties.company)
            #expect(again.status == .conflict)
            #expect(try harness.object(again)["detail"] as? String == "The subscription has already ended.")

            let byCompany = try await harness.acceptedRequestID(parties, subscriptionDays: 30)
            var other = TestHarness.Company()
            other.vatNumber = TestHarness.uniqueVATNumber()
            let otherToken = try await harness.activeCompany(other)
            #expect(try await harness.request(.delete, "/v1/single-requests/\(byCompany)/subscription", token: otherToken).status == .notFound)
            let endedByCompany = try await harness.request(.delete, "/v1/single-requests/\(byCompany)/subscription", token: parties.company)
            #expect((try harness.object(endedByCompany)["subscription"] as? [String: Any])?["endedBy"] as? String == "third_party")

            let pending = try await harness.sentRequestID(parties, subscriptionDays: 5)
            let notAccepted = try await harness.request(.delete, "/v1/single-requests/\(pending)/subscription", token: parties.company)
            #expect(notAccepted.status == .conflict)
            #expect(try harness.object(notAccepted)["detail"] as? String == "The request is still pending; its subscription has not started.")
            _ = try await harness.request(.post, "/v1/single-requests/\(pending)/cancel", token: parties.company)

            let oneOff = try await harness.acceptedRequestID(parties)
            let none = try await harness.request(.delete, "/v1/single-requests/\(oneOff)/subscription", token: parties.person)
            #expect(none.status == .conflict)
            #expect(try harness.object(none)["detail"] as? String == "This request has no subscription.")

            let actions = try await harness.sql("SELECT action FROM audit_events WHERE action = 'subscription.ended'")
            #expect(actions.count == 2)
        }
    }

    @Test("concurrent accept and cancel: exactly one wins, the other answers 409")
    func acceptCancelRace() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            for _ in 0..<8 {
                let id = try await harness.sentRequestID(parties)
                // Each on a connection of its own, so the server really handles them at the same time.
                async let accept = harness.requestOnNewConnection(.post, "/v1/single-requests/\(id)/accept", token: parties.person)
                async let cancel = harness.requestOnNewConnection(.post, "/v1/single-requests/\(id)/cancel", token: parties.company)
                let statuses = [try await accept.status, try await cancel.status]
                #expect(statuses.filter { $0 == .ok }.count == 1, "\(statuses)")
                #expect(statuses.filter { $0 == .conflict }.count == 1, "\(statuses)")
                let final = try harness.object(try await harness.request(.get, "/v1/single-requests/\(id)", token: parties.company))
                let winner = statuses[0] == .ok ? "accepted" : "cancelled"
                #expect(final["status"] as? String == winner)
                if winner == "accepted" {
                    _ = try await harness.request(.delete, "/v1/single-requests/\(id)/subscription", token: parties.company)
                }
            }
        }
    }

    @Test("concurrent sends to one person: one pending request, the rest 409")
    func duplicateRace() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                let body = #"{"subject":{"email":"\#(parties.personEmail)"},"types":["heart_rate"],"purposeCode":"HRESCH","purpose":"x"}"#
                for _ in 0..<8 {
                    group.addTask {
                        try await harness.requestOnNewConnection(.post, "/v1/single-requests", json: body, token: parties.company).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .created }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0 == .conflict }.count == 7, "\(statuses)")
            #expect(try await harness.int("SELECT count(*) FROM single_requests WHERE status = 'pending'") == 1)
        }
    }

    @Test("every decision writes an audit event naming the person only by pseudonym")
    func auditTrail() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let id = try await harness.acceptedRequestID(parties, subscriptionDays: 3)
            _ = try await harness.request(.delete, "/v1/single-requests/\(id)/subscription", token: parties.company)
            let rows = try await harness.sql(
                "SELECT action, coalesce(subject, ''), coalesce(actor_id, '') FROM audit_events WHERE request_id = '\(id)' ORDER BY seq")
            let events = try rows.map { try $0.decode((String, String, String).self) }
            #expect(events.map(\.0) == ["single_request.created", "single_request.accepted", "subscription.ended"])
            for (_, subject, actor) in events {
                #expect(subject.hasPrefix("p_"))
                #expect(!subject.contains(parties.personID) && !actor.contains(parties.personID))
            }
            #expect(events[0].2 == parties.companyID)
            #expect(events[1].2 == events[1].1)
        }
    }
}
