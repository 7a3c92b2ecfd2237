import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerDomain
@testable import BrokerHTTP

/// `POST /v1/me/samples` with a FHIR R4 Bundle (`application/fhir+json`, issue 31 item 5): Observations read
/// back through the mapping table, the upload's validation, idempotence, atomicity and limit, units converted
/// by the documented list, what is skipped, and the subject an attacker writes into the Bundle ignored.
@Suite("FHIR Bundle import", .serialized)
struct FHIRImportTests {
    // MARK: Bundles as text

    /// An Observation: `codes` as (system, code), or a LOINC code alone; `effective` the whole
    /// `"effective…": …` member; `value` the whole `"valueQuantity": …` member (or nothing).
    static func observation(
        _ codes: [(String, String)], effective: String, value: String?, status: String = "final", extra: String = ""
    ) -> String {
        let coding = codes.map { #"{"system":"\#($0.0)","code":"\#($0.1)"}"# }.joined(separator: ",")
        return """
            {"resourceType":"Observation","status":"\(status)","code":{"coding":[\(coding)]},\(effective)\
            \(value.map { "," + $0 } ?? "")\(extra)}
            """
    }

    static func loinc(_ code: String) -> [(String, String)] { [(FHIRSystems.loinc, code)] }

    static func at(_ time: String) -> String { #""effectiveDateTime":"\#(time)""# }

    static func period(_ start: String, _ end: String) -> String { #""effectivePeriod":{"start":"\#(start)","end":"\#(end)"}"# }

    static func quantity(_ value: Double, _ code: String) -> String {
        #""valueQuantity":{"value":\#(value),"unit":"\#(code)","system":"http://unitsofmeasure.org","code":"\#(code)"}"#
    }

    /// A reading of one type at `time`, coded and united as the table writes it.
    static func reading(_ type: SampleType, _ value: Double, at time: String) -> String {
        let coding = type.observationCoding
        return observation(
            [(coding.code.system, coding.code.code)], effective: coding.effective == .instant ? at(time) : period(time, time),
            value: quantity(value, coding.unitCode))
    }

    static func bloodPressure(_ systolic: Double, _ diastolic: Double, at time: String, panel: String = "85354-9") -> String {
        """
        {"resourceType":"Observation","status":"final","code":{"coding":[{"system":"http://loinc.org","code":"\(panel)"}]},\(at(time)),
         "component":[{"code":{"coding":[{"system":"http://loinc.org","code":"8480-6"}]},\(quantity(systolic, "mm[Hg]"))},
                      {"code":{"coding":[{"system":"http://loinc.org","code":"8462-4"}]},\(quantity(diastolic, "mm[Hg]"))}]}
        """
    }

    static let patient = #"{"resourceType":"Patient","id":"p1","name":[{"family":"Bianchi","given":["Laura"]}],"birthDate":"1990-01-01"}"#
    static let encounter = #"{"resourceType":"Encounter","id":"e1","status":"finished","class":{"code":"AMB"}}"#

    static func bundle(_ resources: [String], type: String = "collection") -> String {
        let entries = resources.enumerated().map {
            #"{"fullUrl":"urn:uuid:00000000-0000-0000-0000-\#(String(format: "%012d", $0.offset))","resource":\#($0.element)}"#
        }
        return #"{"resourceType":"Bundle","type":"\#(type)","entry":["# + entries.joined(separator: ",\n") + "]}"
    }

    // MARK: HTTP and the database

    private func upload(_ body: String, _ harness: TestHarness, token: String, contentType: String = "application/fhir+json")
        async throws -> TestResponse
    {
        try await harness.request(.post, "/v1/me/samples", json: body, token: token, headers: [.contentType: contentType])
    }

    private func expectStored(
        _ response: TestResponse, _ harness: TestHarness, accepted: Int, duplicates: Int = 0, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(response.status == .ok, "\(harness.text(response).prefix(2000))", sourceLocation: sourceLocation)
        guard response.status == .ok else { return }
        let body = try harness.object(response)
        #expect(body["accepted"] as? Int == accepted, "accepted", sourceLocation: sourceLocation)
        #expect(body["duplicates"] as? Int == duplicates, "duplicates", sourceLocation: sourceLocation)
    }

    private func expectInvalid(
        _ response: TestResponse, _ harness: TestHarness, fields: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(response.status == .unprocessableContent, "\(harness.text(response).prefix(2000))", sourceLocation: sourceLocation)
        #expect(response.headers[.contentType] == "application/problem+json", sourceLocation: sourceLocation)
        #expect(try harness.errorFields(response) == fields, "\(harness.text(response).prefix(2000))", sourceLocation: sourceLocation)
    }

    /// Samples as `type@at` → value, `at` as UTC text with microseconds (of every account, or one).
    private func stored(_ harness: TestHarness, of account: String? = nil) async throws -> [String: Double] {
        let rows = try await harness.sql(
            """
            SELECT type::int8, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), value FROM samples
            \(account.map { "WHERE user_id = '\($0)'" } ?? "")
            """)
        var result: [String: Double] = [:]
        for row in rows {
            let (type, at, value) = try row.decode((Int64, String, Double).self)
            let name = SampleType.allCases.first { Int64($0.code) == type }?.rawValue ?? "?"
            result["\(name)@\(at)"] = value
        }
        return result
    }

    private func expectClose(_ actual: Double?, _ expected: Double, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            actual.map { abs($0 - expected) < 0.0001 } == true, "\(what): \(String(describing: actual)) ≠ \(expected)", sourceLocation: sourceLocation
        )
    }

    // MARK: The table, read back

    @Test("a collection Bundle with every sample type imports each to its type, time and unit")
    func everyType() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            var expected: [String: Double] = [:]
            var resources: [String] = []
            for (index, type) in SampleType.allCases.enumerated() {
                let value = ((type.range.lowerBound + type.range.upperBound) / 2).rounded()
                let time = "2026-10-01T08:\(String(format: "%02d", index)):00Z"
                resources.append(Self.reading(type, value, at: time))
                expected["\(type.rawValue)@2026-10-01T08:\(String(format: "%02d", index)):00.000000"] = value
            }
            try expectStored(try await upload(Self.bundle(resources), harness, token: token), harness, accepted: SampleType.allCases.count)
            #expect(try await stored(harness) == expected)
        }
    }

    @Test("a blood pressure panel (85354-9 or 55284-4) gives a systolic and a diastolic sample")
    func bloodPressurePanel() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let body = Self.bundle([
                Self.bloodPressure(121, 78, at: "2026-10-02T08:00:00+02:00"),
                Self.bloodPressure(135, 88, at: "2026-10-03T08:00:00Z", panel: "55284-4"),
            ])
            try expectStored(try await upload(body, harness, token: token), harness, accepted: 4)
            #expect(
                try await stored(harness) == [
                    "systolic_pressure@2026-10-02T06:00:00.000000": 121, "diastolic_pressure@2026-10-02T06:00:00.000000": 78,
                    "systolic_pressure@2026-10-03T08:00:00.000000": 135, "diastolic_pressure@2026-10-03T08:00:00.000000": 88,
                ])
        }
    }

    @Test(
        "transaction, batch and searchset Bundles import; document, history and message are refused",
        arguments: [
            ("transaction", true), ("batch", true), ("searchset", true), ("document", false), ("history", false), ("message", false),
        ])
    func bundleTypes(type: String, imports: Bool) async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            var body = Self.bundle([Self.reading(.heartRate, 70, at: "2026-10-04T08:00:00Z"), Self.patient], type: type)
            if type == "transaction" || type == "batch" {
                // As a transaction carries them: a request per entry, which the import does not read.
                body = body.replacingOccurrences(of: #""fullUrl""#, with: #""request":{"method":"POST","url":"Observation"},"fullUrl""#)
            }
            if type == "searchset" { body = body.replacingOccurrences(of: #""fullUrl""#, with: #""search":{"mode":"match"},"fullUrl""#) }
            let response = try await upload(body, harness, token: token)
            if imports {
                try expectStored(response, harness, accepted: 1)
                #expect(try await stored(harness) == ["heart_rate@2026-10-04T08:00:00.000000": 70])
            } else {
                try expectInvalid(response, harness, fields: ["type"])
                #expect(try await stored(harness).isEmpty)
            }
        }
    }

    @Test("values in the documented other units are converted into the table's unit")
    func unitConversions() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let t = "2026-10-05T08:00:00Z"
            let body = Self.bundle([
                Self.observation(Self.loinc("29463-7"), effective: Self.at(t), value: Self.quantity(150, "[lb_av]")),
                Self.observation(Self.loinc("8302-2"), effective: Self.at(t), value: Self.quantity(65, "[in_i]")),
                Self.observation(Self.loinc("8310-5"), effective: Self.at(t), value: Self.quantity(98.6, "[degF]")),
                Self.observation(Self.loinc("15074-8"), effective: Self.at(t), value: Self.quantity(99, "mg/dL")),
                Self.observation(Self.loinc("55430-3"), effective: Self.period(t, t), value: Self.quantity(5.2, "km")),
                Self.observation(Self.loinc("41981-2"), effective: Self.period(t, t), value: Self.quantity(1000, "kJ")),
                Self.observation(Self.loinc("93832-4"), effective: Self.period(t, "2026-10-05T15:30:00Z"), value: Self.quantity(450, "min")),
                Self.observation(Self.loinc("8867-4"), effective: Self.at(t), value: Self.quantity(61, "{beats}/min")),
                Self.observation(Self.loinc("40443-4"), effective: Self.at(t), value: Self.quantity(52, "count/min")),
                Self.observation(Self.loinc("59408-5"), effective: Self.at(t), value: Self.quantity(0.97, "1")),
                // No UCUM code: the unit text is read as one.
                Self.observation(Self.loinc("80404-7"), effective: Self.at(t), value: #""valueQuantity":{"value":0.045,"unit":"s"}"#),
            ])
            try expectStored(try await upload(body, harness, token: token), harness, accepted: 11)
            let samples = try await stored(harness)
            let key = "@2026-10-05T08:00:00.000000"
            expectClose(samples["weight" + key], 68.0389, "150 lb")
            expectClose(samples["height" + key], 165.1, "65 in")
            expectClose(samples["body_temperature" + key], 37, "98.6 °F")
            expectClose(samples["blood_glucose" + key], 5.4952, "99 mg/dL")
            expectClose(samples["distance_walking_running" + key], 5200, "5.2 km")
            expectClose(samples["active_energy_burned" + key], 239.0057, "1000 kJ")
            expectClose(samples["sleeping_hours" + key], 7.5, "450 min")
            expectClose(samples["heart_rate" + key], 61, "{beats}/min")
            expectClose(samples["resting_heart_rate" + key], 52, "count/min")
            expectClose(samples["oxygen_saturation" + key], 97, "0.97")
            expectClose(samples["heart_rate_variability" + key], 45, "0.045 s")
        }
    }

    @Test("times: effectiveInstant, a period's start, sleep's length from its period; a date alone or no time is refused")
    func effectiveTimes() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let good = Self.bundle([
                Self.observation(
                    Self.loinc("8867-4"), effective: #""effectiveInstant":"2026-10-06T08:00:00.250+01:00""#, value: Self.quantity(70, "/min")),
                Self.observation(
                    Self.loinc("55423-8"), effective: Self.period("2026-10-06T00:00:00Z", "2026-10-07T00:00:00Z"),
                    value: Self.quantity(9000, "{steps}")),
                Self.observation(Self.loinc("93832-4"), effective: Self.period("2026-10-05T23:00:00Z", "2026-10-06T06:15:00Z"), value: nil),
            ])
            try expectStored(try await upload(good, harness, token: token), harness, accepted: 3)
            #expect(
                try await stored(harness) == [
                    "heart_rate@2026-10-06T07:00:00.250000": 70, "step_count@2026-10-06T00:00:00.000000": 9000,
                    "sleeping_hours@2026-10-05T23:00:00.000000": 7.25,
                ])
            let bad = Self.bundle([
                Self.observation(Self.loinc("8867-4"), effective: Self.at("2026-10-06"), value: Self.quantity(70, "/min")),
                Self.observation(
                    Self.loinc("8867-4"), effective: #""effectiveTiming":{"event":["2026-10-06T08:00:00Z"]}"#, value: Self.quantity(70, "/min")),
                Self.observation(Self.loinc("8867-4"), effective: #""issued":"2026-10-06T08:00:00Z""#, value: Self.quantity(70, "/min")),
                Self.observation(Self.loinc("8867-4"), effective: Self.at("2026-10-06T09:00:00Z"), value: #""valueString":"seventy""#),
                Self.observation(Self.loinc("93832-4"), effective: Self.period("2026-10-06T06:00:00Z", "2026-10-05T23:00:00Z"), value: nil),
            ])
            try expectInvalid(
                try await upload(bad, harness, token: token), harness,
                fields: [
                    "entry[0].resource.effectiveDateTime", "entry[1].resource.effectiveTiming", "entry[2].resource.effective[x]",
                    "entry[3].resource.valueString", "entry[4].resource.effectivePeriod.end",
                ])
            #expect(try await stored(harness).count == 3)
        }
    }

    // MARK: Reported, never guessed; all or nothing

    @Test("an unknown code and an unsupported unit are reported by entry, and nothing of the Bundle is stored")
    func unknownCodeAndUnit() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let t = "2026-10-07T08:00:00Z"
            let body = Self.bundle([
                Self.reading(.heartRate, 70, at: t),
                Self.reading(.weight, 60, at: t),
                Self.patient,
                // Hemoglobin A1c: a LOINC code, but not one of the table's.
                Self.observation(Self.loinc("4548-4"), effective: Self.at(t), value: Self.quantity(5.4, "%")),
                Self.reading(.stepCount, 100, at: t),
                Self.reading(.height, 170, at: t),
                Self.observation(Self.loinc("29463-7"), effective: Self.at("2026-10-07T09:00:00Z"), value: Self.quantity(10, "[stone_av]")),
                Self.observation(
                    Self.loinc("8867-4"), effective: Self.at("2026-10-07T09:00:00Z"), value: #""valueQuantity":{"value":70,"unit":"beats/minute"}"#),
                Self.observation(
                    Self.loinc("8310-5"), effective: Self.at(t),
                    value: #""valueQuantity":{"value":37,"system":"http://snomed.info/sct","code":"258710007"}"#),
                Self.observation(
                    Self.loinc("8867-4"), effective: Self.at("2026-10-07T10:00:00Z"),
                    value: #""valueQuantity":{"value":70,"comparator":">","code":"/min"}"#),
                Self.observation([], effective: Self.at(t), value: Self.quantity(70, "/min")),
            ])
            let response = try await upload(body, harness, token: token)
            try expectInvalid(
                response, harness,
                fields: [
                    "entry[3].resource.code", "entry[6].resource.valueQuantity.code", "entry[7].resource.valueQuantity.unit",
                    "entry[8].resource.valueQuantity.system", "entry[9].resource.valueQuantity.comparator", "entry[10].resource.code",
                ])
            let messages = try #require(try harness.object(response)["errors"] as? [[String: Any]]).compactMap { $0["message"] as? String }
            #expect(messages.first?.contains("4548-4") == true, "\(messages)")
            #expect(messages.dropFirst().first?.contains("[lb_av]") == true, "the accepted units are listed: \(messages)")
            #expect(try await stored(harness).isEmpty)
            #expect(try await harness.int("SELECT count(*) FROM daily_rollups") == 0)
        }
    }

    @Test("five good Observations and one out of range store nothing: the same 422 as an upload's")
    func atomicity() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let good = (0..<5).map { Self.reading(.heartRate, 60 + Double($0), at: "2026-10-08T08:0\($0):00Z") }
            let body = Self.bundle(
                good + [Self.observation(Self.loinc("29463-7"), effective: Self.at("2026-10-08T09:00:00Z"), value: Self.quantity(1500, "[lb_av]"))])
            let response = try await upload(body, harness, token: token)
            try expectInvalid(response, harness, fields: ["entry[5].resource.valueQuantity.value"])
            let message = try #require(try harness.object(response)["errors"] as? [[String: Any]]).first?["message"] as? String
            #expect(message == "must be within 1–500 kg for weight")
            #expect(try await stored(harness).isEmpty)
        }
    }

    @Test("re-uploading the same Bundle stores nothing new")
    func idempotence() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let body = Self.bundle([
                Self.reading(.heartRate, 70, at: "2026-10-09T08:00:00Z"), Self.bloodPressure(120, 80, at: "2026-10-09T08:00:00Z"),
                Self.reading(.stepCount, 5000, at: "2026-10-09T00:00:00Z"),
            ])
            try expectStored(try await upload(body, harness, token: token), harness, accepted: 4)
            try expectStored(try await upload(body, harness, token: token), harness, accepted: 0, duplicates: 4)
            #expect(try await stored(harness).count == 4)
        }
    }

    @Test("a resting heart rate coded 40443-4 and 8867-4, in either order, is a resting heart rate")
    func restingHeartRateCodes() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let body = Self.bundle([
                Self.observation(
                    Self.loinc("40443-4") + Self.loinc("8867-4"), effective: Self.at("2026-10-10T06:00:00Z"), value: Self.quantity(52, "/min")),
                Self.observation(
                    Self.loinc("8867-4") + Self.loinc("40443-4"), effective: Self.at("2026-10-11T06:00:00Z"), value: Self.quantity(54, "/min")),
            ])
            try expectStored(try await upload(body, harness, token: token), harness, accepted: 2)
            #expect(
                try await stored(harness) == [
                    "resting_heart_rate@2026-10-10T06:00:00.000000": 52, "resting_heart_rate@2026-10-11T06:00:00.000000": 54,
                ])
        }
    }

    // MARK: Skipped

    @Test("Patients and Encounters are counted as skipped; withdrawn and absent Observations are skipped with their reason")
    func skipped() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let t = "2026-10-12T08:00:00Z"
            let body = Self.bundle([
                Self.patient, Self.encounter, Self.encounter,
                Self.reading(.heartRate, 70, at: t),
                Self.observation(
                    Self.loinc("8867-4"), effective: Self.at("2026-10-12T09:00:00Z"), value: Self.quantity(71, "/min"), status: "entered-in-error"),
                Self.observation(
                    Self.loinc("8867-4"), effective: Self.at("2026-10-12T10:00:00Z"), value: Self.quantity(72, "/min"), status: "cancelled"),
                Self.observation(
                    Self.loinc("29463-7"), effective: Self.at(t), value: nil,
                    extra:
                        #","dataAbsentReason":{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/data-absent-reason","code":"asked-declined"}]}"#
                ),
                // A panel whose diastolic was not measured: the systolic is imported.
                Self.bloodPressure(130, 85, at: t).replacingOccurrences(
                    of: Self.quantity(85, "mm[Hg]"), with: #""dataAbsentReason":{"coding":[{"code":"not-performed"}]}"#),
                // The vital signs panel as portals write it: its members are entries of their own.
                Self.observation(
                    Self.loinc("85353-1"), effective: Self.at(t), value: nil,
                    extra: #","hasMember":[{"reference":"urn:uuid:00000000-0000-0000-0000-000000000003"}]"#),
            ])
            let response = try await upload(body, harness, token: token)
            try expectStored(response, harness, accepted: 2)
            let answer = try harness.object(response)
            #expect(answer["skipped"] as? [String: Int] == ["Patient": 1, "Encounter": 2, "Observation": 4])
            let reasons = (answer["skippedObservations"] as? [[String: Any]] ?? []).map { "\($0["entry"] ?? "?"): \($0["reason"] ?? "?")" }
            #expect(
                reasons == [
                    "4: status is entered-in-error", "5: status is cancelled", "6: no value (dataAbsentReason 'asked-declined')",
                    "7: component[1] (diastolic_pressure) has no value (dataAbsentReason 'not-performed')",
                    "8: a panel of other Observations (hasMember), which are read as entries of their own",
                ])
            #expect(try await stored(harness) == ["heart_rate@2026-10-12T08:00:00.000000": 70, "systolic_pressure@2026-10-12T08:00:00.000000": 130])
        }
    }

    @Test("a Bundle with nothing to import is a 422 saying what it skipped")
    func nothingToImport() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let response = try await upload(Self.bundle([Self.patient, Self.encounter]), harness, token: token)
            try expectInvalid(response, harness, fields: ["entry"])
            #expect(harness.text(response).contains("1 Encounter, 1 Patient"))
            try expectInvalid(try await upload(#"{"resourceType":"Bundle","type":"collection"}"#, harness, token: token), harness, fields: ["entry"])
        }
    }

    // MARK: Attacks and limits

    @Test("an Observation naming another person as its subject is stored for the caller, never for them")
    func subjectIsIgnored() async throws {
        try await TestHarness.run { harness in
            let attacker = try await harness.activeUser(.init(fiscalCode: TestHarness.uniqueFiscalCode()))
            let victim = try await harness.activeUser(.init(fiscalCode: TestHarness.uniqueFiscalCode()))
            let attackerID = try await harness.accountID(attacker)
            let victimID = try await harness.accountID(victim)
            let subject = #","subject":{"reference":"Patient/\#(victimID)","identifier":{"system":"\#(FHIRSystems.account)","value":"\#(victimID)"}}"#
            let body = Self.bundle([
                Self.observation(Self.loinc("8867-4"), effective: Self.at("2026-10-13T08:00:00Z"), value: Self.quantity(190, "/min"), extra: subject),
                #"{"resourceType":"Patient","id":"\#(victimID)","identifier":[{"system":"\#(FHIRSystems.account)","value":"\#(victimID)"}]}"#,
            ])
            try expectStored(try await upload(body, harness, token: attacker), harness, accepted: 1)
            #expect(try await stored(harness, of: victimID).isEmpty)
            #expect(try await stored(harness, of: attackerID) == ["heart_rate@2026-10-13T08:00:00.000000": 190])
            let victimsList = try harness.object(try await harness.request(.get, "/v1/me/samples", token: victim))
            #expect((victimsList["items"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("a Bundle of 10,001 samples is refused as a 10,001-sample upload is, a panel counting two")
    func overMaximum() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let start = Date(timeIntervalSince1970: 1_767_225_600 - 40 * 86_400)
            let times = (0..<10_001).map { Timestamp.rfc3339(start.addingTimeInterval(Double($0) * 60)) }
            let readings = Self.bundle(times.map { Self.reading(.heartRate, 60, at: $0) })
            try expectInvalid(try await upload(readings, harness, token: token), harness, fields: ["entry"])
            // 5,001 panels are 10,002 samples.
            let panels = Self.bundle(times.prefix(5_001).map { Self.bloodPressure(120, 80, at: $0) })
            try expectInvalid(try await upload(panels, harness, token: token), harness, fields: ["entry"])
            #expect(try await stored(harness).isEmpty)
        }
    }

    @Test("10,000 Observations as a portal writes them (pretty-printed, over the JSON body limit) import")
    func largePrettyBundle() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let start = Date(timeIntervalSince1970: 1_767_225_600 - 40 * 86_400)
            let narrative =
                #","text":{"status":"generated","div":"<div xmlns=\"http://www.w3.org/1999/xhtml\">"#
                + String(repeating: "Heart rate measured at rest by the ward's monitor. ", count: 30) + #"</div>"}"#
            let resources = (0..<10_000).map {
                Self.observation(
                    Self.loinc("8867-4"), effective: Self.at(Timestamp.rfc3339(start.addingTimeInterval(Double($0) * 60))),
                    value: Self.quantity(60 + Double($0 % 40), "/min"), extra: narrative)
            }
            let compact = try JSONSerialization.jsonObject(with: Data(Self.bundle(resources).utf8))
            let pretty = try JSONSerialization.data(withJSONObject: compact, options: [.prettyPrinted])
            #expect(pretty.count > jsonBodyLimit)
            #expect(pretty.count < fhirBundleBodyLimit)
            try expectStored(try await upload(String(decoding: pretty, as: UTF8.self), harness, token: token), harness, accepted: 10_000)
            // The raised limit is the FHIR Bundle's only: the same size as JSON samples is still a 413.
            let asJSON = try await upload(String(decoding: pretty, as: UTF8.self), harness, token: token, contentType: "application/json")
            #expect(asJSON.status == .contentTooLarge)
        }
    }

    @Test("a body that is not a Bundle is a 422 naming resourceType; JSON that does not parse is a 400; a company is a 403")
    func notABundle() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let bare = Self.reading(.heartRate, 70, at: "2026-10-14T08:00:00Z")
            try expectInvalid(try await upload(bare, harness, token: token), harness, fields: ["resourceType"])
            try expectInvalid(try await upload(Self.patient, harness, token: token), harness, fields: ["resourceType"])
            try expectInvalid(try await upload(#"{"samples":[]}"#, harness, token: token), harness, fields: ["resourceType"])
            let malformed = try await upload(#"{"resourceType":"Bundle","type":"collection","entry":["#, harness, token: token)
            #expect(malformed.status == .badRequest, "\(harness.text(malformed))")
            let array = try await upload("[" + bare + "]", harness, token: token)
            #expect(array.status == .badRequest, "\(harness.text(array))")
            let entries = Self.bundle([bare]).replacingOccurrences(
                of: #""entry":["#, with: #""entry":[42,{"fullUrl":"x"},{"resource":{"resourceType":"not a type"}},"#)
            try expectInvalid(
                try await upload(entries, harness, token: token), harness,
                fields: ["entry[0]", "entry[1].resource", "entry[2].resource.resourceType"])
            let company = try await harness.activeCompany()
            #expect(try await upload(Self.bundle([bare]), harness, token: company).status == .forbidden)
            // Refused before the body is read: a body that does not even parse is a 403 too, not a 400 (the
            // generated code would have decoded all of it first, whatever its size).
            let unread = try await upload(#"{"resourceType":"Bundle","entry":[0,0,0"#, harness, token: company)
            #expect(unread.status == .forbidden, "\(harness.text(unread))")
            #expect(try await stored(harness).isEmpty)
        }
    }

    @Test("at most BundleDecodeSlots.limit Bundles are decoded at once; the next is a 503 with Retry-After")
    func decodeSlots() async throws {
        let slots = BundleDecodeSlots()
        let (started, starting) = AsyncStream.makeStream(of: Void.self)
        // One stream per holder: an AsyncStream has one reader.
        let holds = (0..<BundleDecodeSlots.limit).map { _ in AsyncStream.makeStream(of: Void.self) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (release, _) in holds {
                group.addTask {
                    try await slots.run {
                        starting.yield()
                        for await _ in release {}
                    }
                }
            }
            var count = 0
            for await _ in started {
                count += 1
                if count == BundleDecodeSlots.limit { break }
            }
            do {
                try await slots.run {}
                Issue.record("a decode beyond the limit got a slot")
            } catch let busy as BundleUploadsBusy {
                #expect(busy.problem.status == .serviceUnavailable && busy.problem.headers[.retryAfter] == "2")
            }
            for (_, releasing) in holds { releasing.finish() }
            try await group.waitForAll()
        }
        try await slots.run {}  // the slots are free again
    }

    // MARK: The documented example

    @Test("docs/examples/fhir-bundle.json imports cleanly")
    func documentedExample() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("docs/examples/fhir-bundle.json")
            // With the FHIR version parameter R4 clients send.
            let response = try await upload(
                try String(contentsOf: file, encoding: .utf8), harness, token: token, contentType: "application/fhir+json; fhirVersion=4.0")
            try expectStored(response, harness, accepted: 10)
            let answer = try harness.object(response)
            #expect(answer["skipped"] as? [String: Int] == ["Patient": 1, "Encounter": 1])
            #expect(answer["skippedObservations"] == nil)
            let samples = try await stored(harness)
            #expect(samples["heart_rate@2026-10-14T07:05:00.000000"] == 72)
            #expect(samples["systolic_pressure@2026-10-14T07:10:00.000000"] == 122)
            #expect(samples["diastolic_pressure@2026-10-14T07:10:00.000000"] == 79)
            expectClose(samples["weight@2026-10-14T07:02:00.000000"], 61.0082, "134.5 lb")
            expectClose(samples["blood_glucose@2026-10-14T06:30:00.000000"], 5.1067, "92 mg/dL")
            #expect(samples["sleeping_hours@2026-10-13T21:15:00.000000"] == 7.5)
            #expect(samples["step_count@2026-10-12T22:00:00.000000"] == 8412)
            #expect(samples.count == 10)
        }
    }
}
