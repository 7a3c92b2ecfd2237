import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Samples as FHIR R4 Observations: the mapping table, the encoder, and the downloads that use it (a
/// company's single-request download and a person's own export) as a Bundle and as NDJSON.
@Suite("FHIR observations", .serialized)
struct FHIRObservationTests {
    static let t0 = Date(timeIntervalSince1970: 1_772_352_000)  // 2026-03-01T08:00:00Z

    /// Encodes `samples` in one chunk and parses what was written.
    static func encode(
        _ samples: [(SampleType, Double, Date)], form: FHIRObservationEncoder.Form, subject: FHIRObservationEncoder.Subject = .account(UUID())
    ) throws -> (text: String, resources: [[String: Any]], released: Int) {
        var encoder = FHIRObservationEncoder(
            form: form, subject: subject, idPrefix: "p", timestamp: t0, nextLink: form == .bundle ? "/next?cursor=" : nil)
        let codes = samples.map(\.0.code)
        let values = samples.map(\.1)
        let times = samples.map { DownloadBytes.micros($0.2) }
        encoder.begin(codes: codes, times: times)
        var released = 0
        for row in samples.indices { released += encoder.append(codes: codes, times: times, values: values, row: row) }
        encoder.finish(nextCursor: "c1")
        let text = String(decoding: encoder.takeChunk(), as: UTF8.self)
        switch form {
        case .ndjson:
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.last == "", "NDJSON ends with a newline")
            return (
                text, try lines.dropLast().map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }, released
            )
        case .bundle:
            let bundle = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            #expect(bundle["resourceType"] as? String == "Bundle" && bundle["type"] as? String == "collection")
            let entries = bundle["entry"] as? [[String: Any]] ?? []
            return (text, entries.compactMap { $0["resource"] as? [String: Any] }, released)
        }
    }

    static func code(_ resource: [String: Any]) -> String? {
        ((resource["code"] as? [String: Any])?["coding"] as? [[String: Any]])?.first?["code"] as? String
    }

    @Test("every sample type maps to its table row: code, UCUM unit, category, effective[x]")
    func everyType() throws {
        let samples = SampleType.allCases.enumerated().map { index, type in
            (type, type.range.lowerBound + 1, Self.t0.addingTimeInterval(Double(index) * 60))
        }
        let (_, resources, released) = try Self.encode(samples, form: .ndjson)
        #expect(resources.count == SampleType.allCases.count && released == SampleType.allCases.count)
        for ((type, value, at), resource) in zip(samples, resources) {
            let coding = type.observationCoding
            #expect(resource["resourceType"] as? String == "Observation" && resource["status"] as? String == "final")
            #expect(Self.code(resource) == coding.code.code)
            let quantity = try #require(resource["valueQuantity"] as? [String: Any])
            #expect((quantity["value"] as? NSNumber)?.doubleValue == value)
            #expect(quantity["code"] as? String == coding.unitCode && quantity["system"] as? String == "http://unitsofmeasure.org")
            let category = ((resource["category"] as? [[String: Any]])?.first?["coding"] as? [[String: Any]])?.first?["code"] as? String
            #expect(category == coding.category.rawValue)
            switch coding.effective {
            case .instant:
                #expect(resource["effectiveDateTime"] as? String == Timestamp.rfc3339(at))
            case .period:
                let period = try #require(resource["effectivePeriod"] as? [String: Any])
                #expect(period["start"] as? String == Timestamp.rfc3339(at))
                let end = type == .sleepingHours ? at.addingTimeInterval(value * 3600) : at
                #expect(period["end"] as? String == Timestamp.rfc3339(end))
            }
            // A code outside LOINC is Data4Help's, never a LOINC code that means something else.
            let system = ((resource["code"] as? [String: Any])?["coding"] as? [[String: Any]])?.first?["system"] as? String
            #expect(system == (coding.hasLOINCCode ? "http://loinc.org" : FHIRSystems.sampleType))
        }
        #expect(Set(resources.compactMap { $0["id"] as? String }).count == resources.count, "ids are unique")
        #expect(!SampleType.standingHours.observationCoding.hasLOINCCode && !SampleType.vo2Max.observationCoding.hasLOINCCode)
    }

    @Test("the table reads back: every code names its type; a resting heart rate wins over the general heart rate")
    func reverse() {
        for type in SampleType.allCases {
            let coding = type.observationCoding
            #expect(SampleType(observationCodes: [(coding.code.system, coding.code.code)]) == type)
            #expect(SampleType(observationCodes: [(FHIRSystems.sampleType, type.rawValue)]) == type)
        }
        let resting = [("http://loinc.org", "40443-4"), ("http://loinc.org", "8867-4")]
        #expect(SampleType(observationCodes: resting) == .restingHeartRate)
        #expect(SampleType(observationCodes: resting.reversed()) == .restingHeartRate)
        #expect(SampleType(observationCodes: [("http://loinc.org", "2708-6")]) == .oxygenSaturation)
        #expect(SampleType(observationCodes: [("http://loinc.org", "8867-4"), ("http://loinc.org", "29463-7")]) == nil, "two types")
        #expect(SampleType(observationCodes: [("http://snomed.info/sct", "8867-4")]) == nil, "the right code in the wrong system")
        #expect(SampleType(observationCodes: [("http://loinc.org", "99999-9")]) == nil)
    }

    @Test("blood pressure: a pair at one instant is one panel; a lone or mismatched reading is its own")
    func bloodPressure() throws {
        let t1 = Self.t0.addingTimeInterval(600)
        let samples: [(SampleType, Double, Date)] = [
            (.diastolicPressure, 80, Self.t0), (.heartRate, 70, Self.t0), (.systolicPressure, 120, Self.t0),  // a pair, apart
            (.systolicPressure, 130, t1),  // alone
            (.systolicPressure, 140, t1.addingTimeInterval(60)), (.diastolicPressure, 85, t1.addingTimeInterval(120)),  // not one instant
        ]
        for form in [FHIRObservationEncoder.Form.bundle, .ndjson] {
            let (_, resources, released) = try Self.encode(samples, form: form)
            #expect(released == samples.count)
            #expect(resources.map { Self.code($0) } == ["85354-9", "8867-4", "8480-6", "8480-6", "8462-4"])
            let panel = resources[0]
            #expect(panel["valueQuantity"] == nil)
            let components = try #require(panel["component"] as? [[String: Any]])
            let pairs = components.map { component in
                (
                    ((component["code"] as? [String: Any])?["coding"] as? [[String: Any]])?.first?["code"] as? String ?? "",
                    ((component["valueQuantity"] as? [String: Any])?["value"] as? NSNumber)?.doubleValue ?? 0
                )
            }
            #expect(pairs.map(\.0) == ["8480-6", "8462-4"] && pairs.map(\.1) == [120, 80])
            #expect(panel["effectiveDateTime"] as? String == Timestamp.rfc3339(Self.t0))
        }
    }

    @Test("blood pressure: many readings at a few instants pair as the first encoder's per-instant queues paired them")
    func bloodPressurePairingMatchesQueues() throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<20 {
            // Readings at 1–6 instants, in any order, with heart rates between; each value names its row.
            let instants = (0..<Int.random(in: 1...6, using: &generator)).map { Self.t0.addingTimeInterval(Double($0) * 60) }
            let kinds: [SampleType] = [.systolicPressure, .diastolicPressure, .heartRate]
            let samples: [(SampleType, Double, Date)] = (0..<(round == 0 ? 2 : 200)).map { row in
                (kinds.randomElement(using: &generator)!, 40 + Double(row), instants.randomElement(using: &generator)!)
            }
            // The encoder before issue 33: a dictionary of waiting readings per instant, filled in arrival order.
            var partner: [Int: Int] = [:]
            var waiting: [Date: (systolic: [Int], diastolic: [Int])] = [:]
            for (row, sample) in samples.enumerated() where sample.0 != .heartRate {
                var entry = waiting[sample.2, default: ([], [])]
                if sample.0 == .systolicPressure, let other = entry.diastolic.first {
                    entry.diastolic.removeFirst()
                    (partner[other], partner[row]) = (row, other)
                } else if sample.0 == .diastolicPressure, let other = entry.systolic.first {
                    entry.systolic.removeFirst()
                    (partner[other], partner[row]) = (row, other)
                } else if sample.0 == .systolicPressure {
                    entry.systolic.append(row)
                } else {
                    entry.diastolic.append(row)
                }
                waiting[sample.2] = entry
            }
            var expected: [String] = []
            for (row, sample) in samples.enumerated() {
                guard let other = partner[row] else {
                    expected.append("\(sample.0.observationCoding.code.code)=\(ReleasedSampleEncoder.number(sample.1))")
                    continue
                }
                guard other > row else { continue }
                let (systolic, diastolic) = sample.0 == .systolicPressure ? (row, other) : (other, row)
                expected.append("85354-9=\(40 + systolic)/\(40 + diastolic)")
            }
            let (_, resources, released) = try Self.encode(samples, form: .ndjson)
            #expect(released == samples.count)
            let got = resources.map { resource -> String in
                guard let components = resource["component"] as? [[String: Any]] else {
                    let value = ((resource["valueQuantity"] as? [String: Any])?["value"] as? NSNumber)?.doubleValue ?? -1
                    return "\(Self.code(resource) ?? "?")=\(ReleasedSampleEncoder.number(value))"
                }
                let values = components.map { Int(((($0["valueQuantity"] as? [String: Any])?["value"]) as? NSNumber)?.doubleValue ?? -1) }
                return "\(Self.code(resource) ?? "?")=\(values[0])/\(values[1])"
            }
            #expect(got == expected)
        }
    }

    @Test("an empty Bundle has no entry array (FHIR JSON has no empty arrays) and a next link")
    func emptyBundle() throws {
        let (text, resources, _) = try Self.encode([], form: .bundle)
        #expect(resources.isEmpty && !text.contains("\"entry\""))
        let bundle = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect((bundle["link"] as? [[String: Any]])?.first?["url"] as? String == "/next?cursor=c1")
        #expect(try Self.encode([], form: .ndjson).text == "")
    }

    @Test("a company's download as a Bundle and as NDJSON: the JSON download's samples, the request's pseudonym, cursors")
    func companyDownload() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let types = ["heart_rate", "systolic_pressure", "diastolic_pressure", "step_count", "sleeping_hours"]
            let upload = try await harness.upload(
                [
                    ("heart_rate", 61, "2026-03-01T08:00:00Z"), ("systolic_pressure", 121, "2026-03-01T08:05:00Z"),
                    ("diastolic_pressure", 79, "2026-03-01T08:05:00Z"), ("systolic_pressure", 133, "2026-03-01T09:00:00Z"),
                    ("step_count", 812, "2026-03-01T10:00:00Z"), ("sleeping_hours", 7.5, "2026-03-01T22:30:00Z"),
                    ("weight", 70.1, "2026-03-02T09:00:00Z"),
                ], token: parties.person)
            #expect(upload.status == .ok)
            let id = try await harness.acceptedRequestID(parties, types: types, subscriptionDays: 30)
            let json = try await harness.download(id, token: parties.company)

            let bundle = try await harness.request(.get, "/v1/single-requests/\(id)/data?format=fhir", token: parties.company)
            #expect(bundle.status == .ok)
            #expect(bundle.headers[.contentType] == "application/fhir+json; charset=utf-8")
            let cursor = try #require(bundle.headers[HTTPField.Name("Data4Help-Next-Cursor")!])
            let document = try harness.object(bundle)
            let resources = (document["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
            #expect(resources.compactMap { Self.code($0) }.sorted() == ["55423-8", "8480-6", "85354-9", "8867-4", "93832-4"])
            #expect((document["link"] as? [[String: Any]])?.first?["url"] as? String == "/v1/single-requests/\(id)/data?format=fhir&cursor=\(cursor)")

            // The subject is the pseudonym the request's Consent names, and nothing that identifies the person.
            let consent = try harness.object(try await harness.request(.get, "/v1/single-requests/\(id)/consent", token: parties.company))
            let patient = try #require((consent["patient"] as? [String: Any])?["identifier"] as? [String: Any])
            for resource in resources {
                let subject = try #require((resource["subject"] as? [String: Any])?["identifier"] as? [String: Any])
                #expect(subject["value"] as? String == patient["value"] as? String && subject["system"] as? String == patient["system"] as? String)
            }
            let text = harness.text(bundle)
            for secret in [parties.personEmail, parties.personFiscalCode, parties.personID] { #expect(!text.contains(secret)) }

            let ndjson = try await harness.request(.get, "/v1/single-requests/\(id)/data?format=ndjson", token: parties.company)
            #expect(ndjson.headers[.contentType] == "application/fhir+ndjson")
            let lines = harness.text(ndjson).split(separator: "\n")
            #expect(lines.count == resources.count)
            let fromLines = try lines.map { line in
                String(
                    decoding: try JSONSerialization.data(
                        withJSONObject: try JSONSerialization.jsonObject(with: Data(line.utf8)), options: [.sortedKeys]), as: UTF8.self)
            }
            let fromBundle = try resources.map {
                String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self)
            }
            #expect(Set(fromLines) == Set(fromBundle), "the NDJSON lines are the Bundle's resources")
            let byAccept = try await harness.request(
                .get, "/v1/single-requests/\(id)/data", token: parties.company, headers: [.accept: "application/fhir+ndjson"])
            #expect(harness.text(byAccept) == harness.text(ndjson))
            // Every sample of the JSON download is in the FHIR one: the panel holds two.
            #expect(json.items.count == 6)

            // Same cursor semantics: nothing new since → an empty Bundle with the same cursor; a new sample → only it.
            let again = try await harness.request(.get, "/v1/single-requests/\(id)/data?format=fhir&cursor=\(cursor)", token: parties.company)
            #expect(try harness.object(again)["entry"] == nil)
            #expect(again.headers[HTTPField.Name("Data4Help-Next-Cursor")!] == cursor)
            _ = try await harness.upload([("heart_rate", 90, "2026-03-03T08:00:00Z")], token: parties.person)
            let next = try await harness.request(.get, "/v1/single-requests/\(id)/data?format=ndjson&cursor=\(cursor)", token: parties.company)
            #expect(harness.text(next).split(separator: "\n").count == 1)
            let released = try await harness.int(
                "SELECT coalesce(sum((details->>'rows')::int), 0) FROM audit_events WHERE action = 'single_request.data_released'")
            #expect(released == 6 + 6 + 6 + 6 + 0 + 1, "each download is recorded with the samples it released")
        }
    }

    @Test("the console's FHIR downloads are the API's: a company's request, a person's export")
    func console() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0), TestHarness.time(minutes: 1)], token: parties.person)
            let id = try await harness.acceptedRequestID(parties)
            func entries(_ response: TestResponse) throws -> [String] {
                try (harness.object(response)["entry"] as? [[String: Any]] ?? []).map {
                    String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self)
                }
            }
            let companyEmail = try #require(try harness.object(try await harness.request(.get, "/v1/me", token: parties.company))["email"] as? String)
            let company = ConsoleBrowser(harness)
            #expect(try await company.logIn(companyEmail, TestHarness.Company().password).status == .seeOther)
            let page = try await company.get("/company/requests/\(id)")
            #expect(harness.text(page).contains("/company/requests/\(id)/data.fhir.json"))
            let console = try await company.send(.get, "/company/requests/\(id)/data.fhir.json", body: nil, headers: [:])
            #expect(console.status == .ok && console.headers[.contentType] == "application/fhir+json; charset=utf-8")
            #expect(console.headers[.contentDisposition]?.contains(".fhir.json") == true)
            let api = try await harness.request(.get, "/v1/single-requests/\(id)/data?format=fhir", token: parties.company)
            #expect(try entries(console).count == 2 && entries(console) == entries(api))

            let person = ConsoleBrowser(harness)
            #expect(try await person.logIn(parties.personEmail, TestHarness.Person().password).status == .seeOther)
            #expect(harness.text(try await person.get("/account")).contains("/export?format=fhir"))
            let export = try await person.send(.get, "/export?format=fhir", body: nil, headers: [:])
            #expect(export.headers[.contentDisposition]?.contains("data4help-observations.fhir.json") == true)
            let own = try await harness.request(.get, "/v1/me/export?format=fhir", token: parties.person)
            #expect(try entries(export).count == 2 && entries(export) == entries(own))
        }
    }

    @Test("a person's export in FHIR: their samples, their account as the subject; companies get 422")
    func personalExport() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            _ = try await harness.upload(
                [
                    ("systolic_pressure", 121, "2026-03-01T08:05:00Z"), ("diastolic_pressure", 79, "2026-03-01T08:05:00Z"),
                    ("weight", 70.1, "2026-03-02T09:00:00Z"),
                ], token: parties.person)
            let bundle = try await harness.request(.get, "/v1/me/export?format=fhir", token: parties.person)
            #expect(bundle.status == .ok && bundle.headers[.contentType] == "application/fhir+json; charset=utf-8")
            let resources = (try harness.object(bundle)["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
            #expect(resources.map { Self.code($0) } == ["85354-9", "29463-7"])
            let subject = (resources.first?["subject"] as? [String: Any])?["identifier"] as? [String: Any]
            #expect(subject?["value"] as? String == parties.personID && subject?["system"] as? String == FHIRSystems.account)
            let ndjson = try await harness.request(.get, "/v1/me/export?format=ndjson", token: parties.person)
            #expect(harness.text(ndjson).split(separator: "\n").count == 2)
            #expect(try await harness.request(.get, "/v1/me/export?format=fhir", token: parties.company).status == .unprocessableContent)
            #expect(try await harness.request(.get, "/v1/me/export?format=csv", token: parties.person).status == .unprocessableContent)
            #expect(
                try await harness.request(.get, "/v1/me/export", token: parties.person).headers[.contentType] == "application/json; charset=utf-8")
        }
    }
}
