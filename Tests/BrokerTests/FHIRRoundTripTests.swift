import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// What Data4Help writes as FHIR it reads back: every Observation a download or an export produces,
/// uploaded as a Bundle by another person, gives exactly the samples it was written from.
@Suite("FHIR round trip", .serialized)
struct FHIRRoundTripTests {
    /// One sample of every type (values with up to six decimals, as a device may send), a blood pressure
    /// pair at one instant, a lone systolic reading, and a night's sleep.
    static let samples: [(type: String, value: Double, at: String)] = {
        var samples = SampleType.allCases.enumerated().map { index, type in
            (type: type.rawValue, value: type.range.lowerBound + 1 + Double(index) * 0.123457, at: String(format: "2026-03-01T%02d:00:00Z", index))
        }
        samples.append((type: "systolic_pressure", value: 118, at: "2026-03-02T08:00:00.5Z"))
        samples.append((type: "diastolic_pressure", value: 76, at: "2026-03-02T08:00:00.5Z"))
        samples.append((type: "systolic_pressure", value: 141, at: "2026-03-02T09:00:00Z"))
        samples.append((type: "sleeping_hours", value: 7.25, at: "2026-03-02T22:45:00Z"))
        return samples
    }()

    /// The caller's samples as `type@at=value`, every page.
    static func stored(_ harness: TestHarness, token: String) async throws -> Set<String> {
        let response = try await harness.request(.get, "/v1/me/samples?limit=1000", token: token)
        let items = try harness.object(response)["items"] as? [[String: Any]] ?? []
        return Set(
            items.map { item in
                let at = Timestamp.parse(item["at"] as? String ?? "").map(Timestamp.rfc3339) ?? "?"
                return "\(item["type"] as? String ?? "")@\(at)=\((item["value"] as? NSNumber)?.doubleValue ?? .nan)"
            })
    }

    /// NDJSON lines wrapped as a collection Bundle, as a receiver would pass them on.
    static func bundle(ofLines text: String) -> String {
        let entries = text.split(separator: "\n").map { #"{"resource":\#($0)}"# }.joined(separator: ",")
        return #"{"resourceType":"Bundle","type":"collection","entry":[\#(entries)]}"#
    }

    static func importBundle(_ harness: TestHarness, _ body: String) async throws -> (token: String, accepted: Int) {
        var person = TestHarness.Person()
        person.fiscalCode = TestHarness.uniqueFiscalCode()
        let token = try await harness.activeUser(person)
        let response = try await harness.request(
            .post, "/v1/me/samples", json: body, token: token, headers: [.contentType: "application/fhir+json"])
        try #require(response.status == .ok, "import answered \(response.status): \(harness.text(response))")
        return (token, try harness.object(response)["accepted"] as? Int ?? -1)
    }

    @Test("a company's NDJSON and Bundle downloads and a person's FHIR export import to the same samples")
    func roundTrip() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let upload = try await harness.upload(Self.samples, token: parties.person)
            try #require(upload.status == .ok, "\(harness.text(upload))")
            let original = try await Self.stored(harness, token: parties.person)
            #expect(original.count == Self.samples.count)
            let id = try await harness.acceptedRequestID(parties, types: SampleType.allCases.map(\.rawValue))

            let ndjson = try await harness.request(.get, "/v1/single-requests/\(id)/data?format=ndjson", token: parties.company)
            #expect(harness.text(ndjson).contains("85354-9"), "the pair was written as a panel")
            let fromNDJSON = try await Self.importBundle(harness, Self.bundle(ofLines: harness.text(ndjson)))
            #expect(fromNDJSON.accepted == Self.samples.count)
            #expect(try await Self.stored(harness, token: fromNDJSON.token) == original)

            let bundle = try await harness.request(.get, "/v1/single-requests/\(id)/data?format=fhir", token: parties.company)
            let fromBundle = try await Self.importBundle(harness, harness.text(bundle))
            #expect(try await Self.stored(harness, token: fromBundle.token) == original)

            let export = try await harness.request(.get, "/v1/me/export?format=fhir", token: parties.person)
            let fromExport = try await Self.importBundle(harness, harness.text(export))
            #expect(try await Self.stored(harness, token: fromExport.token) == original)

            // Importing what one exported again stores nothing new: the same (type, at) are duplicates.
            let again = try await harness.request(
                .post, "/v1/me/samples", json: harness.text(export), token: fromExport.token,
                headers: [.contentType: "application/fhir+json"])
            #expect(try harness.object(again)["accepted"] as? Int == 0)
        }
    }
}
