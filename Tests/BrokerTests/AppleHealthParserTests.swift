import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer
@testable import BrokerTooling

#if canImport(CZlib)
    import CZlib
#endif

@Suite("Apple Health export parsing")
struct AppleHealthParserTests {

    static let expectedSkipped: [AppleHealthSkip: Int] = [
        .init(reason: .notAsleep, identifier: "HKCategoryTypeIdentifierSleepAnalysis"): 1,
        .init(reason: .notStood, identifier: "HKCategoryTypeIdentifierAppleStandHour"): 1,
        .init(reason: .unsupportedType, identifier: "HKQuantityTypeIdentifierBasalEnergyBurned"): 2,
        .init(reason: .unsupportedType, identifier: "HKCorrelationTypeIdentifierFood"): 1,
        .init(reason: .unsupportedType, identifier: "HKQuantityTypeIdentifierDietaryEnergyConsumed"): 1,
    ]

    /// Everything a parse produced, or the error it stopped with.
    struct Outcome: Equatable {
        var samples: [Sample]
        var skipped: [AppleHealthSkip: Int]
        var recordsSeen: Int
        var invalidCount = 0
        var invalidExamples: [AppleHealthInvalidRecord] = []
        var timeZone: String?

        /// The count of one skipped identifier, whatever the reason.
        func skipped(_ identifier: String) -> Int {
            skipped.filter { $0.key.identifier == identifier }.values.reduce(0, +)
        }
    }

    static func outcome(_ parser: AppleHealthParser, _ samples: [Sample]) -> Outcome {
        Outcome(
            samples: samples, skipped: parser.skipped, recordsSeen: parser.recordsSeen, invalidCount: parser.invalidCount,
            invalidExamples: parser.invalidExamples, timeZone: parser.timeZone)
    }

    static func parse(_ bytes: [UInt8], chunks: [Int]? = nil) throws(AppleHealthImportError) -> Outcome {
        var parser = AppleHealthParser(now: Date())
        var samples: [Sample] = []
        var start = 0
        for size in chunks ?? [bytes.count] where start < bytes.count {
            let end = min(start + size, bytes.count)
            samples += try parser.feed(bytes[start..<end])
            start = end
        }
        if start < bytes.count { samples += try parser.feed(bytes[start...]) }
        try parser.finish()
        return outcome(parser, samples)
    }

    static func parse(_ text: String) throws(AppleHealthImportError) -> Outcome {
        try parse(Array(text.utf8))
    }

    /// Expects `body` to fail with `expected`.
    static func expect(
        _ expected: AppleHealthImportError, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws -> Void
    ) {
        do {
            try body()
            Issue.record("expected \(expected), got success", sourceLocation: sourceLocation)
        } catch {
            #expect(error as? AppleHealthImportError == expected, sourceLocation: sourceLocation)
        }
    }

    static func expectMalformed(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected malformed, got success", sourceLocation: sourceLocation)
        } catch {
            guard case .malformed = error as? AppleHealthImportError else {
                Issue.record("expected malformed, got \(error)", sourceLocation: sourceLocation)
                return
            }
        }
    }

    static func assertExpected(_ outcome: Outcome, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(outcome.samples.count == AppleHealthFixtures.expectedSamples.count, sourceLocation: sourceLocation)
        for (got, want) in zip(outcome.samples, AppleHealthFixtures.expectedSamples) {
            #expect(
                got.type == want.type && got.at == want.at && abs(got.value - want.value) < 1e-9,
                "\(got) ≠ \(want)", sourceLocation: sourceLocation)
        }
        #expect(outcome.skipped == expectedSkipped, sourceLocation: sourceLocation)
        #expect(outcome.invalidCount == 1, sourceLocation: sourceLocation)
        #expect(outcome.invalidExamples == AppleHealthFixtures.expectedInvalid, sourceLocation: sourceLocation)
        #expect(outcome.recordsSeen == 17, sourceLocation: sourceLocation)
    }

    @Test("a realistic export maps every type, converts units and counts what it skips")
    func realisticExport() throws {
        Self.assertExpected(try Self.parse(AppleHealthFixtures.export))
    }

    @Test("the same file split at any position, in 1-byte chunks or random chunks, gives the same result")
    func everySplit() throws {
        let bytes = Array(AppleHealthFixtures.export.utf8)
        let whole = try Self.parse(bytes)
        for split in 0...bytes.count {
            #expect(try Self.parse(bytes, chunks: [split, bytes.count]) == whole, "split at \(split)")
        }
        #expect(try Self.parse(bytes, chunks: Array(repeating: 1, count: bytes.count)) == whole)
        var random = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            var chunks: [Int] = []
            var total = 0
            while total < bytes.count {
                chunks.append(Int.random(in: 1...200, using: &random))
                total += chunks.last!
            }
            #expect(try Self.parse(bytes, chunks: chunks) == whole, "chunks \(chunks)")
        }
    }

    @Test("damaged exports never crash, and give the same samples or error whole as split")
    func damagedExports() throws {
        let original = Array(AppleHealthFixtures.export.utf8)
        let interesting = Array("<>\"'&;/!-[]?=% x\n#".utf8)
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = interesting.randomElement(using: &random)!
                case 1: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...40, using: &random)))
                default: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + 30)], at: at)
                }
            }
            let whole = Result { () throws(AppleHealthImportError) in try Self.parse(bytes) }
            var chunks: [Int] = []
            while chunks.reduce(0, +) < bytes.count { chunks.append(Int.random(in: 1...64, using: &random)) }
            let split = Result { () throws(AppleHealthImportError) in try Self.parse(bytes, chunks: chunks) }
            #expect(whole == split, "\(String(decoding: bytes, as: UTF8.self))")
        }
    }

    @Test("a file cut anywhere after the root starts is truncated; before it, not Apple Health or truncated")
    func truncated() throws {
        let bytes = Array(AppleHealthFixtures.export.utf8)
        let root = bytes.firstRange(of: Array("<HealthData".utf8))!.lowerBound
        let end = bytes.lastIndex(of: UInt8(ascii: ">"))!
        Self.expect(.truncated) { _ = try Self.parse(Array(bytes[..<(bytes.count / 2)])) }
        for cut in stride(from: root + 1, through: end, by: 3) {
            Self.expect(.truncated) { _ = try Self.parse(Array(bytes[..<cut])) }
        }
        Self.expect(.truncated) { _ = try Self.parse(Array(bytes[..<(root - 3)])) }  // inside the DOCTYPE
        Self.expect(.empty) { _ = try Self.parse([UInt8]()) }
        Self.expect(.notAppleHealth) { _ = try Self.parse("<?xml version=\"1.0\"?>\n") }
    }

    @Test("a document that is not an Apple Health export is refused at once")
    func notAppleHealth() throws {
        Self.expect(.notAppleHealth) { _ = try Self.parse("<?xml version=\"1.0\"?><html><body/></html>") }
        Self.expect(.notAppleHealth) { _ = try Self.parse("<!DOCTYPE html><html></html>") }
        Self.expect(.notXML) { _ = try Self.parse(#"{"samples": []}"#) }
        Self.expect(.notXML) { _ = try Self.parse("type,value,at\nheart_rate,72,2024-01-01T00:00:00Z\n") }
        var parser = AppleHealthParser(now: Date())
        Self.expect(.notAppleHealth) { _ = try parser.feed(Array("<Records><Record/>".utf8)) }
        Self.expect(.notAppleHealth) { _ = try parser.feed(Array("more".utf8)) }  // stays refused
        // A byte order mark and whitespace before the root are fine.
        #expect(try Self.parse([0xEF, 0xBB, 0xBF] + Array("\n<HealthData/>\n".utf8)).samples.isEmpty)
    }

    @Test("a billion-laughs DTD is refused at its first entity declaration, never expanded")
    func billionLaughs() throws {
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE HealthData [
             <!ENTITY lol "lol">
             <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
             <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
             <!ENTITY lol9 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
            ]>
            <HealthData><Record type="&lol9;"/></HealthData>
            """
        Self.expect(.entityDeclarationsNotAllowed) { _ = try Self.parse(laughs) }
        // Refused as soon as "<!ENTITY" arrives: the rest of the file is never looked at.
        let bytes = Array(laughs.utf8)
        let prefix = bytes[..<bytes.firstRange(of: Array("<!ENTITY".utf8))!.upperBound]
        var parser = AppleHealthParser(now: Date())
        #expect(try parser.feed(prefix.dropLast()) == [])
        Self.expect(.entityDeclarationsNotAllowed) { _ = try parser.feed(prefix.suffix(1)) }
        // External entities are refused the same way; parameter-entity references are skipped, never fetched.
        Self.expect(.entityDeclarationsNotAllowed) {
            _ = try Self.parse(#"<!DOCTYPE HealthData [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><HealthData a="&xxe;"/>"#)
        }
        #expect(try Self.parse(#"<!DOCTYPE HealthData SYSTEM "http://example.com/x.dtd" [ %ext; ]><HealthData/>"#).samples == [])
        // Without any declaration, a reference to an undefined entity is malformed.
        Self.expectMalformed { _ = try Self.parse(#"<HealthData><Record type="&lol9;"/></HealthData>"#) }
    }

    @Test("attribute values decode the predefined entities and character references, and nothing else")
    func references() throws {
        let outcome = try Self.parse(
            """
            <HealthData>
            <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Tom &amp; Jerry &quot;&#x263A;&quot;" unit="count&#47;min" startDate="2024-03-01 08:15:00 +0000" value="7&#x32;"/>
            <Record type="Custom&amp;Type&#x263A;" startDate="2024-03-01 08:15:00 +0000"/>
            </HealthData>
            """)
        #expect(outcome.samples == [Sample(type: .heartRate, value: 72, at: AppleHealthFixtures.utc("2024-03-01T08:15:00Z"))])
        #expect(outcome.skipped == [.init(reason: .unsupportedType, identifier: "Custom&Type☺"): 1])
        Self.expectMalformed { _ = try Self.parse(#"<HealthData><Record sourceName="a &foo; b"/></HealthData>"#) }
        Self.expectMalformed { _ = try Self.parse(#"<HealthData><Record sourceName="a & b"/></HealthData>"#) }
        Self.expectMalformed { _ = try Self.parse(#"<HealthData><Record sourceName="&#0;"/></HealthData>"#) }
        Self.expectMalformed { _ = try Self.parse(#"<HealthData><Me x="&#xD800;"/></HealthData>"#) }
    }

    @Test("badly nested or malformed XML is refused")
    func malformed() throws {
        Self.expectMalformed { _ = try Self.parse("<HealthData><Record></Correlation></HealthData>") }
        Self.expectMalformed { _ = try Self.parse("<HealthData></HealthData><HealthData></HealthData>") }
        Self.expectMalformed { _ = try Self.parse("<HealthData></HealthData>trailing text") }
        Self.expectMalformed { _ = try Self.parse("<HealthData><Record type=HKQuantityTypeIdentifierHeartRate/></HealthData>") }
        Self.expectMalformed { _ = try Self.parse(#"<HealthData><Record type="a"value="b"/></HealthData>"#) }
        Self.expectMalformed { _ = try Self.parse("<HealthData><!ELEMENT x ANY></HealthData>") }
        let deep = String(repeating: "<a>", count: AppleHealthParser.maximumDepth + 1)
        Self.expectMalformed { _ = try Self.parse("<HealthData>\(deep)") }
        let huge = String(repeating: "x", count: AppleHealthParser.maximumTagBytes)
        Self.expectMalformed { _ = try Self.parse(#"<HealthData><Record sourceName="\#(huge)"/></HealthData>"#) }
    }

    @Test("records with unknown units, non-numeric, non-finite or out-of-range values, bad or future dates are invalid, not fatal")
    func invalidValues() throws {
        let outcome = try Self.parse(
            """
            <HealthData>
            <Record type="HKQuantityTypeIdentifierStepCount" unit="count" startDate="2024-03-01 08:15:00 +0000" value="many"/>
            <Record type="HKQuantityTypeIdentifierStepCount" unit="count" startDate="2024-03-01 08:15:00 +0000" value="1e999"/>
            <Record type="HKQuantityTypeIdentifierStepCount" unit="count" startDate="2024-03-01 08:15:00 +0000"/>
            <Record type="HKQuantityTypeIdentifierStepCount" unit="count" startDate="yesterday" value="5"/>

            <Record type="HKQuantityTypeIdentifierStepCount"
                    unit="count" value="5"/>
            <Record type="HKQuantityTypeIdentifierBodyMass" unit="stone" startDate="2024-03-01 08:15:00 +0000" value="11"/>
            <Record type="HKCategoryTypeIdentifierSleepAnalysis" startDate="2024-03-01 08:15:00 +0000" endDate="2024-03-01 07:15:00 +0000" value="HKCategoryValueSleepAnalysisAsleepREM"/>
            <Record type="HKCategoryTypeIdentifierSleepAnalysis" startDate="2024-03-01 08:15:00 +0000" endDate="2024-03-01 08:45:00 +0000" value="HKCategoryValueSleepAnalysisAwake"/>
            <Record unit="count" value="5"/>
            <Record type="HKQuantityTypeIdentifierStepCount" unit="count" startDate="2024-03-01 08:15:00 +0000" value="-0.5e1"/>
            <Record type="HKQuantityTypeIdentifierHeartRate" unit="count/min" startDate="2024-03-01 08:15:00 +0000" value="400"/>
            <Record type="HKQuantityTypeIdentifierHeartRate" unit="count/min" startDate="2999-03-01 08:15:00 +0000" value="60"/>
            <Record type="HKQuantityTypeIdentifierBodyTemperature" unit="degF" startDate="2024-03-01 08:15:00 +0000" value="98.6"/>
            </HealthData>
            """)
        #expect(outcome.samples.count == 1)
        #expect(outcome.samples.first?.type == .bodyTemperature && abs((outcome.samples.first?.value ?? 0) - 37) < 1e-9)
        #expect(
            outcome.skipped == [
                .init(reason: .notAsleep, identifier: "HKCategoryTypeIdentifierSleepAnalysis"): 1,
                .init(reason: .unsupportedType, identifier: "(Record without type)"): 1,
            ])
        #expect(outcome.invalidCount == 10)
        #expect(outcome.recordsSeen == 13)
        // The first five, each on the line its `<Record` starts (the blank line counts; the fifth spans two).
        #expect(outcome.invalidExamples.map(\.line) == [2, 3, 4, 5, 7])
        #expect(
            outcome.invalidExamples.map(\.reason) == [
                #"its value "many" is not a number"#, #"its value "1e999" is not a number"#, "it has no value",
                #"its startDate "yesterday" is not a date and time with a UTC offset"#, "it has no startDate",
            ])
        #expect(outcome.invalidExamples.allSatisfy { $0.identifier == "HKQuantityTypeIdentifierStepCount" })
        // The rest are counted; their reasons read like this.
        var parser = AppleHealthParser(now: Date())
        _ = try parser.feed(
            Array(
                """
                <HealthData>
                <Record type="HKQuantityTypeIdentifierHeartRate" unit="count/min" startDate="2024-03-01 08:15:00 +0000" value="400"/>
                <Record type="HKQuantityTypeIdentifierHeartRate" unit="count/min" startDate="2999-03-01 08:15:00 +0000" value="60"/>
                <Record type="HKQuantityTypeIdentifierBodyMass" unit="stone" startDate="2024-03-01 08:15:00 +0000" value="11"/>
                <Record type="HKCategoryTypeIdentifierSleepAnalysis" startDate="2024-03-01 08:15:00 +0000" endDate="2024-03-01 07:15:00 +0000" value="HKCategoryValueSleepAnalysisAsleepREM"/>
                </HealthData>
                """.utf8))
        try parser.finish()
        #expect(
            parser.invalidExamples.map(\.reason) == [
                "400 beats/min is out of range (20–300 beats/min)", #"it starts in the future ("2999-03-01 08:15:00 +0000")"#,
                #"its unit "stone" is not one Data4Help converts"#, "it ends before it starts",
            ])
    }

    @Test("the new types convert their units: °F, mg/dL, Apple's mmol/L, count/min, ms, mL/(kg·min)")
    func newTypes() throws {
        func one(_ type: String, _ unit: String, _ value: String) throws -> Sample? {
            try Self.parse(
                #"<HealthData><Record type="\#(type)" unit="\#(unit)" startDate="2024-03-01 08:15:00 +0000" value="\#(value)"/></HealthData>"#
            )
            .samples.first
        }
        let cases: [(String, String, String, SampleType, Double)] = [
            ("HKQuantityTypeIdentifierBodyTemperature", "degC", "36.6", .bodyTemperature, 36.6),
            ("HKQuantityTypeIdentifierBodyTemperature", "degF", "100.4", .bodyTemperature, 38),
            ("HKQuantityTypeIdentifierRespiratoryRate", "count/min", "15", .respiratoryRate, 15),
            ("HKQuantityTypeIdentifierRestingHeartRate", "count/min", "58", .restingHeartRate, 58),
            ("HKQuantityTypeIdentifierHeartRateVariabilitySDNN", "ms", "42.5", .heartRateVariability, 42.5),
            ("HKQuantityTypeIdentifierBloodGlucose", "mg/dL", "90.0780", .bloodGlucose, 5),
            ("HKQuantityTypeIdentifierBloodGlucose", "mmol<180.1558800000541>/L", "5.4", .bloodGlucose, 5.4),
            ("HKQuantityTypeIdentifierVO2Max", "mL/min·kg", "41.2", .vo2Max, 41.2),
        ]
        for (identifier, unit, value, type, expected) in cases {
            let sample = try one(identifier, unit, value)
            #expect(sample?.type == type, "\(identifier) \(unit)")
            #expect(abs((sample?.value ?? -1) - expected) < 1e-9, "\(identifier) \(unit): \(String(describing: sample))")
        }
    }

    @Test("the last valid HKTimeZone is remembered; bad names and paths are ignored")
    func timeZones() throws {
        func zone(_ values: [String]) throws -> String? {
            let entries = values.map { #"<Record type="X"><MetadataEntry key="HKTimeZone" value="\#($0)"/></Record>"# }.joined()
            return try Self.parse("<HealthData>\(entries)<MetadataEntry key=\"Other\" value=\"Asia/Tokyo\"/></HealthData>").timeZone
        }
        #expect(try zone([]) == nil)
        #expect(try zone(["Europe/Rome"]) == "Europe/Rome")
        #expect(try zone(["Europe/Rome", "America/New_York", "America/New_York"]) == "America/New_York")
        #expect(try zone(["Europe/Rome", "Not/AZone", "../../etc/passwd", "/etc/localtime", "Europe//Rome", ""]) == "Europe/Rome")
        #expect(try zone(["America/Argentina/Buenos_Aires"]) == "America/Argentina/Buenos_Aires")
    }

    @Test("dates with positive, negative, zero and colon offsets parse to UTC")
    func dates() throws {
        #expect(AppleHealthDate.date("2024-03-01 08:15:00 +0100") == AppleHealthFixtures.utc("2024-03-01T07:15:00Z"))
        #expect(AppleHealthDate.date("2024-03-01 00:15:00 +0100") == AppleHealthFixtures.utc("2024-02-29T23:15:00Z"))
        #expect(AppleHealthDate.date("2023-12-31 22:30:00 -0530") == AppleHealthFixtures.utc("2024-01-01T04:00:00Z"))
        #expect(AppleHealthDate.date("2024-06-30 12:00:00 +05:45") == AppleHealthFixtures.utc("2024-06-30T06:15:00Z"))
        #expect(AppleHealthDate.date("1970-01-01 00:00:00 +0000") == Date(timeIntervalSince1970: 0))
        #expect(AppleHealthDate.date("1969-12-31 23:59:59 -0000") == Date(timeIntervalSince1970: -1))
        #expect(AppleHealthDate.date("2024-03-01T08:15:00Z") == AppleHealthFixtures.utc("2024-03-01T08:15:00Z"))
        #expect(AppleHealthDate.date("2024-03-01 08:15:00.5 +0000") == Date(timeIntervalSince1970: 1_709_280_900.5))
        #expect(AppleHealthDate.date("2400-02-29 00:00:00 +0000") == AppleHealthFixtures.utc("2400-02-29T00:00:00Z"))
        for bad in [
            "2023-02-29 00:00:00 +0000", "2024-03-01 08:15:00", "2024-13-01 08:15:00 +0000",
            "2024-03-01 24:00:00 +0000", "2024-03-01 08:15:00 +01", "2024-3-01 08:15:00 +0100",
            "2024-03-01 08:15:00 +0100 ", "2024-03-01 08:15:00 CET", "",
        ] {
            #expect(AppleHealthDate.date(bad) == nil, "\(bad)")
        }
        // Every day of four centuries agrees with Foundation's calendar.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var day = calendar.date(from: DateComponents(year: 1900, month: 1, day: 1))!
        while day < calendar.date(from: DateComponents(year: 2300, month: 1, day: 1))! {
            let c = calendar.dateComponents([.year, .month, .day], from: day)
            let days = CalendarDate(year: c.year!, month: c.month!, day: c.day!)!.dayNumber
            #expect(Double(days * 86_400) == day.timeIntervalSince1970)
            day = day.addingTimeInterval(86_400 * 7)
        }
    }

    @Test("numbers parse exactly as the standard library parses them")
    func numbers() throws {
        func parse(_ text: String) -> Double? {
            var text = text
            return text.withUTF8 { AppleHealthNumber.parse($0) }
        }
        for text in [
            "72", "0.97", "154.3", "-1.5e3", "1E-2", "+3", "0", "-0", "1.", ".5", "007", "0.000123",
            "12345678901234567890", "1.7976931348623157e308", "4.9e-324", "123456.789012345678",
        ] {
            #expect(parse(text) == Double(text), "\(text)")
        }
        for bad in ["", "-", ".", "e5", "1e", "1,5", "0x10", "nan", "inf", "1.2.3", " 1", "1 "] {
            #expect(parse(bad) == nil, "\(bad)")
        }
        #expect(parse("1e999") == .infinity)
        var random = SystemRandomNumberGenerator()
        for _ in 0..<10_000 {
            let value = Double.random(in: 0..<100_000, using: &random)
            for text in [String(value), String(format: "%.3f", value), String(format: "%.6g", value)] {
                #expect(parse(text) == Double(text), "\(text)")
            }
        }
    }

    @Test("skipped identifiers are capped so that a hostile file cannot grow memory")
    func skippedCap() throws {
        var xml = "<HealthData>"
        for k in 0..<(AppleHealthParser.maximumSkippedIdentifiers + 10) { xml += #"<Record type="T\#(k)"/>"# }
        xml += "</HealthData>"
        let outcome = try Self.parse(xml)
        #expect(outcome.skipped.count == AppleHealthParser.maximumSkippedIdentifiers + 1)
        #expect(outcome.skipped[.init(reason: .unsupportedType, identifier: AppleHealthParser.otherIdentifiers)] == 10)
    }

    @Test("the generator writes a deterministic export that the parser reads whole")
    func generator() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = directory.appendingPathComponent("a.xml")
        let second = directory.appendingPathComponent("b.xml")
        let size = try AppleHealthExportGenerator.write(to: first, approximateBytes: 3_000_000, seed: 7)
        try AppleHealthExportGenerator.write(to: second, approximateBytes: 3_000_000, seed: 7)
        let bytes = try [UInt8](Data(contentsOf: first))
        #expect(bytes.count == size)
        #expect(abs(size - 3_000_000) < 10_000)
        #expect(try Data(contentsOf: second) == Data(bytes))
        let outcome = try Self.parse(bytes, chunks: Array(repeating: 65_536, count: bytes.count / 65_536 + 1))
        #expect(Set(outcome.samples.map(\.type)) == Set(SampleType.allCases))
        #expect(outcome.skipped("HKQuantityTypeIdentifierBasalEnergyBurned") > 100)
        #expect(outcome.skipped[.init(reason: .notAsleep, identifier: "HKCategoryTypeIdentifierSleepAnalysis")]! > 0)
        #expect(outcome.samples.allSatisfy { $0.type.range.contains($0.value) }, "generated values are plausible")
        #expect(outcome.invalidCount == 0)
        #expect(outcome.timeZone == "Europe/Rome")
        // Like Apple's: each blood pressure reading is written twice (on its own, and in its correlation).
        for type in [SampleType.systolicPressure, .diastolicPressure] {
            let counts = Dictionary(grouping: outcome.samples.filter { $0.type == type }, by: \.at).mapValues(\.count)
            #expect(!counts.isEmpty && counts.values.allSatisfy { $0 == 2 }, "\(type)")
        }
    }
}

#if canImport(CZlib)
    @Suite("Apple Health export.zip reading")
    struct AppleHealthArchiveTests {

        /// Writes `bytes` to a temporary file and runs `body` with its URL.
        static func withFile<R>(_ bytes: [UInt8], _ body: (URL) throws -> R) throws -> R {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString).upload")
            try Data(bytes).write(to: url)
            defer { try? FileManager.default.removeItem(at: url) }
            return try body(url)
        }

        /// Reads and parses an upload the way the import endpoint does.
        static func read(
            _ url: URL, format: AppleHealthExportReader.Format? = nil, limit: UInt64 = AppleHealthArchive.defaultMaximumUncompressedSize,
            chunkSize: Int = 1024
        ) throws(AppleHealthImportError) -> AppleHealthParserTests.Outcome {
            let reader = try AppleHealthExportReader(contentsOf: url, format: format, chunkSize: chunkSize, maximumUncompressedSize: limit)
            var parser = AppleHealthParser(now: Date())
            var samples: [Sample] = []
            while let chunk = try reader.next() {
                #expect(chunk.count <= max(chunkSize, 1024))
                samples += try parser.feed(chunk)
            }
            try parser.finish()
            return AppleHealthParserTests.outcome(parser, samples)
        }

        static let export = Array(AppleHealthFixtures.export.utf8)

        @Test("export.xml is streamed out of an iPhone-like export.zip, deflated or stored")
        func exportZip() throws {
            for deflated in [true, false] {
                let archive = AppleHealthFixtures.zip([
                    AppleHealthFixtures.Entry(path: "apple_health_export/", data: [], deflated: false),
                    AppleHealthFixtures.Entry(path: "apple_health_export/export_cda.xml", data: Array("<ClinicalDocument/>".utf8)),
                    AppleHealthFixtures.Entry(path: "__MACOSX/apple_health_export/._export.xml", data: [0, 5, 22, 7]),
                    AppleHealthFixtures.Entry(path: "apple_health_export/workout-routes/route_2024-03-01_6.30pm.gpx", data: Array("<gpx/>".utf8)),
                    AppleHealthFixtures.Entry(path: "apple_health_export/export.xml", data: Self.export, deflated: deflated),
                ])
                try Self.withFile(archive) { url in
                    let entry = try AppleHealthArchive(contentsOf: url).exportXML
                    #expect(entry.path == "apple_health_export/export.xml")
                    #expect(entry.method == (deflated ? 8 : 0))
                    #expect(entry.uncompressedSize == UInt64(Self.export.count))
                    AppleHealthParserTests.assertExpected(try Self.read(url))
                    AppleHealthParserTests.assertExpected(try Self.read(url, format: .zip, chunkSize: 100_000))
                }
            }
            // The plain XML goes through the same reader.
            try Self.withFile(Self.export) { url in
                #expect(try AppleHealthExportReader(contentsOf: url).format == .xml)
                AppleHealthParserTests.assertExpected(try Self.read(url))
            }
        }

        @Test("an archive without export.xml, garbage, or a damaged archive is refused")
        func notAnExport() throws {
            let withoutExport = AppleHealthFixtures.zip([
                AppleHealthFixtures.Entry(path: "apple_health_export/export_cda.xml", data: Array("<ClinicalDocument/>".utf8)),
                AppleHealthFixtures.Entry(path: "export.xml.bak", data: Self.export),
            ])
            try Self.withFile(withoutExport) { url in
                AppleHealthParserTests.expect(.noExportXML(found: ["apple_health_export/export_cda.xml", "export.xml.bak"])) {
                    _ = try Self.read(url)
                }
            }
            try Self.withFile(AppleHealthFixtures.zip([])) { url in
                AppleHealthParserTests.expect(.noExportXML(found: [])) { _ = try Self.read(url) }
            }
            let garbage = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }
            try Self.withFile(garbage) { url in
                AppleHealthParserTests.expect(.notZip) { _ = try AppleHealthArchive(contentsOf: url) }
                AppleHealthParserTests.expect(.notZip) { _ = try Self.read(url, format: .zip) }
                AppleHealthParserTests.expect(.notXML) { _ = try Self.read(url) }  // sniffed as XML
            }
            try Self.withFile([]) { url in
                AppleHealthParserTests.expect(.empty) { _ = try Self.read(url, format: .zip) }
            }
            let good = AppleHealthFixtures.zip([AppleHealthFixtures.Entry(path: "apple_health_export/export.xml", data: Self.export)])
            try Self.withFile(Array(good[..<(good.count / 2)])) { url in
                AppleHealthParserTests.expect(.damagedZip("it has no central directory: the file was probably cut short")) { _ = try Self.read(url) }
            }
            let badCRC = AppleHealthFixtures.zip([AppleHealthFixtures.Entry(path: "export.xml", data: Self.export, crc: 0xDEAD_BEEF)])
            try Self.withFile(badCRC) { url in
                AppleHealthParserTests.expect(.damagedZip("the export fails its CRC-32 check")) { _ = try Self.read(url) }
            }
            var corrupt = good
            corrupt[60...200] = ArraySlice(repeating: 0xFF, count: 141)
            try Self.withFile(corrupt) { url in
                Self.expectDamaged { _ = try Self.read(url) }
            }
        }

        static func expectDamaged(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
            do {
                try body()
                Issue.record("expected damagedZip, got success", sourceLocation: sourceLocation)
            } catch {
                guard case .damagedZip = error as? AppleHealthImportError else {
                    Issue.record("expected damagedZip, got \(error)", sourceLocation: sourceLocation)
                    return
                }
            }
        }

        @Test("an iPhone in another language names the export exportar.xml: the one .xml beside export_cda.xml is taken")
        func localisedExport() throws {
            let spanish = AppleHealthFixtures.zip([
                AppleHealthFixtures.Entry(path: "apple_health_export/", data: [], deflated: false),
                AppleHealthFixtures.Entry(path: "apple_health_export/export_cda.xml", data: Array("<ClinicalDocument/>".utf8)),
                AppleHealthFixtures.Entry(path: "apple_health_export/exportar.xml", data: Self.export),
                AppleHealthFixtures.Entry(path: "apple_health_export/workout-routes/route_2024-03-01_6.30pm.gpx", data: Array("<gpx/>".utf8)),
                AppleHealthFixtures.Entry(path: "__MACOSX/apple_health_export/._exportar.xml", data: [0, 5, 22, 7]),
            ])
            try Self.withFile(spanish) { url in
                #expect(try AppleHealthArchive(contentsOf: url).exportXML.path == "apple_health_export/exportar.xml")
                AppleHealthParserTests.assertExpected(try Self.read(url))
            }
            // export.xml is preferred to any other name.
            let both = AppleHealthFixtures.zip([
                AppleHealthFixtures.Entry(path: "apple_health_export/export_cda.xml", data: Array("<ClinicalDocument/>".utf8)),
                AppleHealthFixtures.Entry(path: "apple_health_export/exportar.xml", data: Array("<HealthData/>".utf8)),
                AppleHealthFixtures.Entry(path: "apple_health_export/export.xml", data: Self.export),
            ])
            try Self.withFile(both) { url in AppleHealthParserTests.assertExpected(try Self.read(url)) }
            // Two candidates: refused, naming both.
            let two = AppleHealthFixtures.zip([
                AppleHealthFixtures.Entry(path: "apple_health_export/exportar_cda.xml", data: Array("<ClinicalDocument/>".utf8)),
                AppleHealthFixtures.Entry(path: "apple_health_export/exportar.xml", data: Self.export),
                AppleHealthFixtures.Entry(path: "apple_health_export/notes.xml", data: Array("<notes/>".utf8)),
            ])
            try Self.withFile(two) { url in
                AppleHealthParserTests.expect(.severalExports(["apple_health_export/exportar.xml", "apple_health_export/notes.xml"])) {
                    _ = try Self.read(url)
                }
            }
            #expect(AppleHealthImportError.severalExports(["a/exportar.xml", "a/notes.xml"]).message.contains("a/exportar.xml, a/notes.xml"))
        }

        @Test("encrypted and ZIP64 archives are refused with a clear reason")
        func unsupported() throws {
            let encrypted = AppleHealthFixtures.zip([AppleHealthFixtures.Entry(path: "export.xml", data: Self.export, flags: 1)])
            try Self.withFile(encrypted) { url in
                AppleHealthParserTests.expect(.unsupportedZip("encryption")) { _ = try Self.read(url) }
            }
            let zip64 = AppleHealthFixtures.zip([AppleHealthFixtures.Entry(path: "export.xml", data: Self.export, declaredSize: 0xFFFF_FFFF)])
            try Self.withFile(zip64) { url in
                AppleHealthParserTests.expect(.unsupportedZip("ZIP64 (an export.xml over 4 GiB)")) { _ = try Self.read(url) }
            }
            #expect(AppleHealthImportError.unsupportedZip("encryption").message.contains("encryption"))
        }

        @Test("zip bombs are refused from their declared sizes, or as soon as inflating passes them")
        func zipBombs() throws {
            // Over the size limit, as declared.
            let honest = AppleHealthFixtures.zip([AppleHealthFixtures.Entry(path: "export.xml", data: Self.export)])
            try Self.withFile(honest) { url in
                AppleHealthParserTests.expect(.zipBomb) { _ = try Self.read(url, limit: 1000) }
                AppleHealthParserTests.assertExpected(try Self.read(url, limit: UInt64(Self.export.count)))
            }
            // Declared compression ratio above 1000:1: 8 MB of zeros deflate to about 8 KB.
            let zeros = [UInt8](repeating: 0, count: 8 << 20)
            #expect(zeros.count / AppleHealthFixtures.rawDeflate(zeros).count > 1000)
            try Self.withFile(AppleHealthFixtures.zip([AppleHealthFixtures.Entry(path: "export.xml", data: zeros)])) { url in
                AppleHealthParserTests.expect(.zipBomb) { _ = try AppleHealthArchive(contentsOf: url) }
            }
            // A lying header: small data declaring 1 GiB.
            try Self.withFile(AppleHealthFixtures.zip([AppleHealthFixtures.Entry(path: "export.xml", data: Self.export, declaredSize: 1 << 30)])) {
                url in
                AppleHealthParserTests.expect(.zipBomb) { _ = try AppleHealthArchive(contentsOf: url) }
            }
            // A lying header the other way: 4 MB of records declared as 100 kB stop at 100 kB, not at 4 MB.
            var big = Array("<HealthData>\n".utf8)
            let record = Array(
                #" <Record type="HKQuantityTypeIdentifierBasalEnergyBurned" unit="kcal" startDate="2024-03-01 12:00:00 +0100" value="1.2"/>\n"#.utf8)
            while big.count < 4 << 20 { big += record }
            big += Array("</HealthData>\n".utf8)
            try Self.withFile(AppleHealthFixtures.zip([AppleHealthFixtures.Entry(path: "export.xml", data: big, declaredSize: 100_000)])) { url in
                let reader = try AppleHealthExportReader(contentsOf: url, chunkSize: 16 * 1024)
                var delivered = 0
                AppleHealthParserTests.expect(.zipBomb) {
                    while let chunk = try reader.next() { delivered += chunk.count }
                }
                #expect(delivered <= 100_000)
                AppleHealthParserTests.expect(.zipBomb) { _ = try reader.next() }  // and it stays refused
            }
            // The same with an honest header but a limit below its size is refused before inflating.
            try Self.withFile(AppleHealthFixtures.zip([AppleHealthFixtures.Entry(path: "export.xml", data: big)])) { url in
                AppleHealthParserTests.expect(.zipBomb) { _ = try Self.read(url, limit: 1 << 20) }
                let outcome = try Self.read(url, chunkSize: 64 * 1024)
                #expect(outcome.skipped("HKQuantityTypeIdentifierBasalEnergyBurned") == outcome.recordsSeen)
            }
        }
    }

#endif
