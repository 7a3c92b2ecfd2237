import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerDomain

/// Issue 29, item 2: at its expiry the sender hears of a request it was shown as pending, alike whatever the
/// person did: never answered, never existed, or refused (a refusal reads pending to the sender until then).
@Suite("Request lapses", .serialized)
struct RequestLapseTests {
    @Test("a lapsed request sends single_request.expired once, alike for unanswered, unaddressed and refused requests")
    func lapsesAnnouncedAlike() async throws {
        try await TestDatabase.withMigratedDatabase { url in
            try await TestHarness.run(databaseURL: url) { harness in
                let parties = try await harness.requestParties()
                _ = try await harness.sql(
                    "INSERT INTO webhooks (third_party_id, url, secret) VALUES ('\(parties.companyID)', 'https://hooks.example.com/d4h', 'a-secret-of-16-chars')"
                )
                func send(_ subject: String) async throws -> String {
                    let response = try await harness.request(
                        .post, "/v1/single-requests",
                        json: #"{"subject":{"fiscalCode":"\#(subject)"},"types":["heart_rate"],"purpose":"Study","purposeCode":"HRESCH"}"#,
                        token: parties.company)
                    return try #require(try harness.object(response)["id"] as? String, "\(harness.text(response))")
                }
                let unanswered = try await harness.sentRequestID(parties)
                let nobody = try await send(TestHarness.uniqueFiscalCode())
                let refused = try await send(parties.personFiscalCode)
                #expect(try await harness.request(.post, "/v1/single-requests/\(refused)/refuse", token: parties.person).status == .ok)
                // Neither of these is shown pending at the lapse: an accepted request, a refusal the sender withdrew.
                var other = TestHarness.Person()
                other.fiscalCode = TestHarness.uniqueFiscalCode()
                let otherToken = try await harness.activeUser(other)
                let withdrawn = try await send(other.fiscalCode)
                #expect(try await harness.request(.post, "/v1/single-requests/\(withdrawn)/refuse", token: otherToken).status == .ok)
                #expect(try await harness.request(.post, "/v1/single-requests/\(withdrawn)/cancel", token: parties.company).status == .ok)
                let accepted = try await harness.acceptedRequestID(
                    RequestParties(
                        company: parties.company, companyID: parties.companyID, person: otherToken, personID: "",
                        personEmail: other.email, personFiscalCode: other.fiscalCode))
                let all = [unanswered, nobody, refused, withdrawn, accepted].map { "'\($0)'" }.joined(separator: ",")
                // The earlier steps' events go first: once the requests have lapsed, the server's own sweep may
                // announce them at any moment, and a delete after that would take its announcements with it.
                _ = try await harness.sql("DELETE FROM webhook_events WHERE third_party_id = '\(parties.companyID)'")
                _ = try await harness.sql("UPDATE single_requests SET expires_at = now() - interval '1 second' WHERE id IN (\(all))")

                let announcedEvents = "SELECT count(*) FROM webhook_events WHERE third_party_id = '\(parties.companyID)'"
                try await TestDatabase.withClient(url) { client in
                    let service = SingleRequestService(client: client, pseudonymizer: Pseudonymizer(client: client))
                    // Each lapse announced once, by this sweep or by the server's own (`sweepRounds`).
                    let announced = try await sweepRounds(until: { try await harness.int(announcedEvents) == 3 }) {
                        try await service.announceLapses(logger: TestDatabase.logger)
                    }
                    #expect(announced <= 3)
                    #expect(try await service.announceLapses(logger: TestDatabase.logger) == 0)
                }
                let rows = try await harness.sql(
                    "SELECT request_id::text, type, data::text FROM webhook_events WHERE third_party_id = '\(parties.companyID)' ORDER BY request_id")
                let events = try rows.map { try $0.decode((String, String, String).self) }
                #expect(events.count == 3)
                #expect(Set(events.map(\.0)) == [unanswered, nobody, refused])
                #expect(events.allSatisfy { $0.1 == "single_request.expired" })
                // The data differs only by the request's own id.
                #expect(Set(events.map { $0.2.replacingOccurrences(of: $0.0, with: "ID") }).count == 1)
                // All three read expired to the sender; the person still sees their refusal.
                for id in [unanswered, nobody, refused] {
                    let read = try harness.object(try await harness.request(.get, "/v1/single-requests/\(id)", token: parties.company))
                    #expect(read["status"] as? String == "expired")
                }
                let own = try harness.object(try await harness.request(.get, "/v1/single-requests/\(refused)", token: parties.person))
                #expect(own["status"] as? String == "refused")
            }
        }
    }
}
