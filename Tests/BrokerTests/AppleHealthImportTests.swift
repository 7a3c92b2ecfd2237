import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer
@testable import BrokerTooling

/// `POST /v1/me/imports/apple-health` and `d4h import apple-health`, end to end: the parser's own tests are in
/// AppleHealthParserTests; these check what a person notices — what is stored, and that bad files store nothing.
@Suite("Apple Health import", .serialized)
struct AppleHealthImportTests {

    @Test("an export.xml is imported with units converted; importing it again stores nothing new")
    func importXMLTwice() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let first = try await AppleHealthFixtures.post(harness, AppleHealthFixtures.exportXML, contentType: "application/xml", token: token)
            #expect(first.status == .ok, "\(harness.text(first))")
            let body = try harness.object(first)
            let stored = try #require(body["stored"] as? Int)
            #expect(stored == AppleHealthFixtures.expectedSamples.count)
            #expect(body["alreadyThere"] as? Int == 0 && body["repeatedInFile"] as? Int == 0)
            let skipped = try #require(body["skipped"] as? [[String: Any]])
            #expect(
                skipped.contains {
                    $0["reason"] as? String == "unsupported type" && $0["identifier"] as? String == "HKQuantityTypeIdentifierBasalEnergyBurned"
                        && $0["count"] as? Int == 2
                })
            #expect(
                skipped.contains {
                    $0["reason"] as? String == "not asleep (in bed or awake)"
                        && $0["identifier"] as? String == "HKCategoryTypeIdentifierSleepAnalysis"
                })
            let invalid = try #require(body["invalid"] as? [String: Any])
            #expect(invalid["count"] as? Int == 1)
            let example = try #require((invalid["examples"] as? [[String: Any]])?.first)
            #expect(example["line"] as? Int == AppleHealthFixtures.expectedInvalid[0].line)
            #expect(example["identifier"] as? String == "HKQuantityTypeIdentifierHeartRate")
            #expect((example["reason"] as? String)?.contains("furlongs") == true)
            #expect(try await AppleHealthFixtures.storedSamples(harness) == stored)

            // 154.3 lb is 69.99 kg; the heart rate at 08:15 +01:00 is 07:15Z.
            let weight = try harness.object(try await harness.request(.get, "/v1/me/samples?type=weight", token: token))
            let weights = try #require(weight["items"] as? [[String: Any]])
            #expect(abs((weights.first?["value"] as? Double ?? 0) - 69.989) < 0.01)
            let heart = try harness.object(try await harness.request(.get, "/v1/me/samples?type=heart_rate", token: token))
            #expect((heart["items"] as? [[String: Any]])?.first?["at"] as? String == "2024-03-01T07:15:00Z")

            let again = try harness.object(
                try await AppleHealthFixtures.post(harness, AppleHealthFixtures.exportXML, contentType: "application/xml", token: token))
            #expect(again["stored"] as? Int == 0)
            #expect(again["alreadyThere"] as? Int == stored)
            #expect(try await AppleHealthFixtures.storedSamples(harness) == stored)
        }
    }

    @Test("the export.zip an iPhone produces imports the same samples as its export.xml")
    func importZip() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let zip = AppleHealthFixtures.zip([
                .init(path: "apple_health_export/export_cda.xml", data: Array("<ClinicalDocument/>".utf8)),
                .init(path: "apple_health_export/export.xml", data: AppleHealthFixtures.exportXML),
            ])
            let response = try await AppleHealthFixtures.post(harness, zip, contentType: "application/zip", token: token)
            #expect(response.status == .ok, "\(harness.text(response))")
            #expect(try harness.object(response)["stored"] as? Int == AppleHealthFixtures.expectedSamples.count)
        }
    }

    @Test("an iPhone in Spanish writes exportar.xml: imported; two candidate files are refused by name")
    func localisedZip() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let spanish = AppleHealthFixtures.zip([
                .init(path: "apple_health_export/export_cda.xml", data: Array("<ClinicalDocument/>".utf8)),
                .init(path: "apple_health_export/exportar.xml", data: AppleHealthFixtures.exportXML),
            ])
            let response = try await AppleHealthFixtures.post(harness, spanish, contentType: "application/zip", token: token)
            #expect(response.status == .ok, "\(harness.text(response))")
            #expect(try harness.object(response)["stored"] as? Int == AppleHealthFixtures.expectedSamples.count)

            let two = AppleHealthFixtures.zip([
                .init(path: "apple_health_export/export_cda.xml", data: Array("<ClinicalDocument/>".utf8)),
                .init(path: "apple_health_export/exportar.xml", data: AppleHealthFixtures.exportXML),
                .init(path: "apple_health_export/exportar (1).xml", data: AppleHealthFixtures.exportXML),
            ])
            let refused = try await AppleHealthFixtures.post(harness, two, contentType: "application/zip", token: token)
            #expect(refused.status == .unprocessableContent)
            let detail = try #require(try harness.object(refused)["detail"] as? String)
            #expect(detail.contains("apple_health_export/exportar (1).xml, apple_health_export/exportar.xml"), "\(detail)")
        }
    }

    /// A generated export with four records made invalid, and the lines they are on (counted here).
    static func realisticExport(bytes: Int, seed: UInt64) throws -> (xml: [UInt8], invalidLines: [Int], correlations: Int) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).xml")
        defer { try? FileManager.default.removeItem(at: url) }
        try AppleHealthExportGenerator.write(to: url, approximateBytes: bytes, seed: seed)
        var lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let heartRates = lines.indices.filter { lines[$0].hasPrefix(#" <Record type="HKQuantityTypeIdentifierHeartRate""#) }
        let damage: [(String, String)] = [
            (#"value="\d+""#, #"value="abc""#), (#"unit="count/min""#, #"unit="furlongs""#),
            (#"value="\d+""#, #"value="999""#), (#"startDate="[^"]*""#, #"startDate="2999-01-01 00:00:00 +0100""#),
        ]
        var invalidLines: [Int] = []
        for (k, (pattern, replacement)) in damage.enumerated() {
            let index = heartRates[10 * (k + 1)]
            lines[index] = lines[index].replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
            invalidLines.append(index + 1)
        }
        let text = lines.joined(separator: "\n")
        let correlations = text.components(separatedBy: #"<Correlation type="HKCorrelationTypeIdentifierBloodPressure""#).count - 1
        return (Array(text.utf8), invalidLines, correlations)
    }

    @Test("honest counts: Apple's repeated blood pressure records are repeatedInFile; a second import finds all already there")
    func honestCounts() async throws {
        let (xml, invalidLines, correlations) = try Self.realisticExport(bytes: 2_000_000, seed: 11)
        #expect(correlations > 10)
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let response = try await AppleHealthFixtures.post(harness, xml, contentType: "application/xml", token: token)
            #expect(response.status == .ok, "\(harness.text(response))")
            let first = try harness.object(response)
            let stored = try #require(first["stored"] as? Int)
            let inDatabase = try await AppleHealthFixtures.storedSamples(harness)
            #expect(stored == inDatabase)
            #expect(first["alreadyThere"] as? Int == 0)
            // Each reading's two records appear again inside its correlation.
            #expect(first["repeatedInFile"] as? Int == 2 * correlations)
            let skipped = try #require(first["skipped"] as? [[String: Any]])
            let reasons = Dictionary(grouping: skipped) { $0["reason"] as? String ?? "" }.mapValues { $0.compactMap { $0["identifier"] as? String } }
            #expect(Set(reasons.keys) == ["unsupported type", "not asleep (in bed or awake)", "not a stood hour (idle)"])
            #expect(reasons["unsupported type"]?.contains("HKQuantityTypeIdentifierBasalEnergyBurned") == true)
            #expect(reasons["not asleep (in bed or awake)"] == ["HKCategoryTypeIdentifierSleepAnalysis"])
            let invalid = try #require(first["invalid"] as? [String: Any])
            #expect(invalid["count"] as? Int == 4)
            let examples = try #require(invalid["examples"] as? [[String: Any]])
            #expect(examples.map { $0["line"] as? Int } == invalidLines)
            #expect(examples.allSatisfy { $0["identifier"] as? String == "HKQuantityTypeIdentifierHeartRate" })
            let reasonsGiven = examples.compactMap { $0["reason"] as? String }
            #expect(
                reasonsGiven.count == 4 && reasonsGiven[0].contains("not a number") && reasonsGiven[1].contains("furlongs")
                    && reasonsGiven[2].contains("out of range") && reasonsGiven[3].contains("future"), "\(reasonsGiven)")
            #expect(first["timeZone"] as? String == "Europe/Rome")

            let again = try harness.object(try await AppleHealthFixtures.post(harness, xml, contentType: "application/xml", token: token))
            #expect(again["stored"] as? Int == 0)
            #expect(again["alreadyThere"] as? Int == stored + 2 * correlations, "every copy is already there")
            #expect(again["repeatedInFile"] as? Int == 0)
            #expect(try await AppleHealthFixtures.storedSamples(harness) == stored)
        }
    }

    @Test("every refusal says precisely what is wrong, answers 422 and stores nothing; the server stays healthy")
    func badFiles() async throws {
        let truncated = Array(AppleHealthFixtures.exportXML.prefix(AppleHealthFixtures.exportXML.count * 2 / 3))
        let laughs = Array(
            """
            <?xml version="1.0"?>
            <!DOCTYPE HealthData [
             <!ENTITY lol "lol">
             <!ENTITY lol9 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
            ]>
            <HealthData><Record type="&lol9;"/></HealthData>
            """.utf8)
        func utf16LE(_ bytes: [UInt8]) -> [UInt8] {
            String(decoding: bytes, as: UTF8.self).utf16.flatMap { unit -> [UInt8] in [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        }
        func utf16BE(_ bytes: [UInt8]) -> [UInt8] {
            String(decoding: bytes, as: UTF8.self).utf16.flatMap { unit -> [UInt8] in [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        }
        let zeros = [UInt8](repeating: 0, count: 8 << 20)
        let goodZip = AppleHealthFixtures.zip([.init(path: "apple_health_export/export.xml", data: AppleHealthFixtures.exportXML)])
        let cases: [(String, [UInt8], String, String)] = [
            ("empty file", [], "application/xml", "The file is empty."),
            ("empty zip", [], "application/zip", "The file is empty."),
            ("not XML", Array("type,value,at\nheart_rate,72,2024-01-01T00:00:00Z\n".utf8), "application/xml", "The file is not XML"),
            (
                "not Apple Health", Array("<html><body>hello</body></html>".utf8), "application/xml",
                "not an Apple Health export: its root element must be <HealthData>"
            ),
            ("truncated halfway", truncated, "application/xml", "truncated: it ends before the closing </HealthData>"),
            ("billion laughs", laughs, "application/xml", "declares entities"),
            ("billion laughs in UTF-16", [0xFF, 0xFE] + utf16LE(laughs), "application/xml", "The export is not UTF-8 (it is UTF-16 or UTF-32)"),
            ("UTF-16 without a byte-order mark", utf16LE(laughs), "application/xml", "The export is not UTF-8"),
            ("UTF-16 big-endian", [0xFE, 0xFF] + utf16BE(AppleHealthFixtures.exportXML), "application/xml", "The export is not UTF-8"),
            ("UTF-16 big-endian without a byte-order mark", utf16BE(AppleHealthFixtures.exportXML), "application/xml", "The export is not UTF-8"),
            (
                "zip without export.xml", AppleHealthFixtures.zip([.init(path: "notes.txt", data: Array("hi".utf8))]), "application/zip",
                "contains no Apple Health export: expected apple_health_export/export.xml; it holds notes.txt"
            ),
            ("truncated zip", Array(goodZip.prefix(goodZip.count / 2)), "application/zip", "The ZIP archive is truncated or damaged"),
            (
                "encrypted zip",
                AppleHealthFixtures.zip([.init(path: "apple_health_export/export.xml", data: AppleHealthFixtures.exportXML, flags: 1)]),
                "application/zip", "uses encryption, which is not supported"
            ),
            (
                "bzip2 zip",
                AppleHealthFixtures.zip([.init(path: "apple_health_export/export.xml", data: AppleHealthFixtures.exportXML, method: 12)]),
                "application/zip", "uses compression method 12, which is not supported"
            ),
            (
                "zip bomb", AppleHealthFixtures.zip([.init(path: "apple_health_export/export.xml", data: zeros)]), "application/zip",
                "inflates beyond the accepted size or compression ratio"
            ),
            ("not a zip", Array("PK but not really a zip archive".utf8), "application/zip", "is not a ZIP archive"),
        ]
        // More imports than the hourly budget allows.
        try await TestHarness.run(configure: { $0.rateLimits.imports = nil }) { harness in
            let token = try await harness.activeUser()
            for (name, bytes, contentType, detail) in cases {
                let response = try await AppleHealthFixtures.post(harness, bytes, contentType: contentType, token: token)
                #expect(response.status == .unprocessableContent, "\(name): \(response.status) \(harness.text(response))")
                #expect(response.headers[.contentType] == "application/problem+json", "\(name)")
                let text = (try? harness.object(response)["detail"] as? String) ?? nil
                #expect(text?.contains(detail) == true, "\(name): \(text ?? harness.text(response))")
                #expect(text?.contains("Nothing from this file was stored") == true, "\(name)")
            }
            #expect(try await AppleHealthFixtures.storedSamples(harness) == 0)
            #expect(try await harness.request(.get, "/health/ready").status == .ok)
            // Still serving imports after all that.
            #expect(
                try await AppleHealthFixtures.post(harness, AppleHealthFixtures.exportXML, contentType: "application/xml", token: token).status == .ok
            )
        }
    }

    /// Before issue 27 (item 2) this answered 500: the overlap resolution, with no cumulative record staged,
    /// returned before creating the table the import then read its kept records from.
    @Test("an export without any cumulative record (heart rate only, as a watch-only app writes it) imports")
    func exportWithoutCumulativeRecords() async throws {
        let export = """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_GB">
             <ExportDate value="2024-03-02 09:00:00 +0100"/>
             <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" startDate="2024-03-01 08:15:00 +0100" endDate="2024-03-01 08:15:00 +0100" value="72"/>
            </HealthData>

            """
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            for (bytes, contentType) in [
                (Array(export.utf8), "application/xml"),
                (AppleHealthFixtures.zip([.init(path: "apple_health_export/export.xml", data: Array(export.utf8))]), "application/zip"),
            ] {
                let response = try await AppleHealthFixtures.post(harness, bytes, contentType: contentType, token: token)
                #expect(response.status == .ok, "\(contentType): \(harness.text(response))")
            }
            #expect(try await AppleHealthFixtures.storedSamples(harness) == 1)
            let heart = try harness.object(try await harness.request(.get, "/v1/me/samples?type=heart_rate", token: token))
            #expect((heart["items"] as? [[String: Any]])?.map { $0["value"] as? Double } == [72])
        }
    }

    @Test("only people import; other content types are 415; no token is 401")
    func rolesAndMediaTypes() async throws {
        try await TestHarness.run { harness in
            let company = try await harness.activeCompany()
            #expect(
                try await AppleHealthFixtures.post(harness, AppleHealthFixtures.exportXML, contentType: "application/xml", token: company).status
                    == .forbidden)
            #expect(
                try await AppleHealthFixtures.post(harness, AppleHealthFixtures.exportXML, contentType: "application/xml", token: nil).status
                    == .unauthorized)
            let person = try await harness.activeUser()
            let wrongType = try await AppleHealthFixtures.post(harness, AppleHealthFixtures.exportXML, contentType: "text/plain", token: person)
            #expect(wrongType.status == .unsupportedMediaType)
            #expect(
                try harness.object(wrongType)["detail"] as? String
                    == "This endpoint accepts application/xml (an Apple Health export.xml) or application/zip (the iPhone's export.zip) bodies.")
            let samples = try await harness.request(.post, "/v1/me/samples", json: "x", token: person, headers: [.contentType: "text/plain"])
            #expect(samples.status == .unsupportedMediaType)
            #expect(try harness.object(samples)["detail"] as? String == "This endpoint accepts application/json or text/csv bodies.")
        }
    }

    @Test("`d4h import apple-health --email` imports for that person, and refuses an unknown email")
    func commandLine() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).xml")
            try Data(AppleHealthFixtures.exportXML).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let run = try await D4HCommand.run(
                ["import", "apple-health", "--email", person.email, file.path], environment: ["DATABASE_URL": harness.databaseURL.text])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("Imported \(AppleHealthFixtures.expectedSamples.count) new samples"), "\(run.output)")
            #expect(run.output.contains("line \(AppleHealthFixtures.expectedInvalid[0].line): HKQuantityTypeIdentifierHeartRate"))
            #expect(try await AppleHealthFixtures.storedSamples(harness) == AppleHealthFixtures.expectedSamples.count)
            let unknown = try await D4HCommand.run(
                ["import", "apple-health", "--email", "nobody@example.com", file.path], environment: ["DATABASE_URL": harness.databaseURL.text])
            #expect(unknown.status != 0)
        }
    }

    /// `mount` or `umount` with `arguments`, through `ChildProcess` (which blocks no concurrency thread); whether it
    /// exited with 0.
    static func mountCommand(_ arguments: [String]) async -> Bool {
        (try? await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), arguments, timeout: .seconds(20)))?.status == 0
    }

    /// Mounts a tmpfs of `size` on a new directory for `body`, then unmounts it (lazily if it is still busy) and
    /// removes the directory, whether `body` threw or not.
    static func withTmpfs<T>(size: String, _ body: (URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-tmpfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        func unmount() async {
            if await !mountCommand(["umount", directory.path]) { _ = await mountCommand(["umount", "-l", directory.path]) }
            try? FileManager.default.removeItem(at: directory)
        }
        guard await mountCommand(["mount", "-t", "tmpfs", "-o", "size=\(size)", "tmpfs", directory.path]) else {
            try? FileManager.default.removeItem(at: directory)
            throw TestSetupError("could not mount a tmpfs on \(directory.path)")
        }
        do {
            let result = try await body(directory)
            await unmount()
            return result
        } catch {
            await unmount()
            throw error
        }
    }

    /// Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN, as `make test` runs here; not root in an
    /// unprivileged container), found by trying.
    static func canMountTmpfs() async -> Bool {
        guard getuid() == 0 else { return false }
        return (try? await withTmpfs(size: "64k") { _ in true }) ?? false
    }

    @Test(
        "an upload the disk has no room for, or that would eat into its reserve, is a 503 storage-full; nothing is stored or left behind",
        .enabled("mounts a small tmpfs") { await canMountTmpfs() })
    func fullDisk() async throws {
        try await Self.withTmpfs(size: "1m") { directory in
            try await TestHarness.run(
                configure: { $0.uploadSpoolDirectory = directory },
                expectedLogs: [.error("no space left to receive an upload")]
            ) { harness in
                let token = try await harness.activeUser()
                func expectStorageFull(_ response: TestResponse, _ comment: Comment) throws {
                    #expect(response.status == .serviceUnavailable, comment)
                    #expect(response.headers[.retryAfter] == "300")
                    #expect(response.headers[.contentType] == "application/problem+json")
                    #expect(try harness.object(response)["type"] as? String == "https://data4help.example/problems/storage-full")
                }
                // About 2 MB of records: twice the disk.
                var xml = String(decoding: AppleHealthFixtures.exportXML, as: UTF8.self)
                let record =
                    #"<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" startDate="2026-05-01 09:00:00 +0200" endDate="2026-05-01 09:00:00 +0200" value="61"/>"#
                xml = xml.replacingOccurrences(of: "</HealthData>", with: String(repeating: record + "\n", count: 12_000) + "</HealthData>")
                let large = try await AppleHealthFixtures.post(harness, Array(xml.utf8), contentType: "application/xml", token: token)
                try expectStorageFull(large, "the disk filled up: \(harness.text(large))")
                #expect(try await AppleHealthFixtures.storedSamples(harness) == 0)
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)

                // Something else leaves 20 KiB free, under the reserve (5 %: 52 KiB): a small export that
                // would fit is refused before a byte is written, so the last of the disk stays for the rest.
                let filler = directory.appendingPathComponent("other-program")
                try Data(count: 1024 * 1024 - 20 * 1024).write(to: filler)
                let small = try await AppleHealthFixtures.post(harness, AppleHealthFixtures.exportXML, contentType: "application/xml", token: token)
                try expectStorageFull(small, "the reserve: \(harness.text(small))")
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["other-program"])

                // Once there is room, the same person imports at once: nothing of the refusals is left behind.
                try FileManager.default.removeItem(at: filler)
                let again = try await AppleHealthFixtures.post(harness, AppleHealthFixtures.exportXML, contentType: "application/xml", token: token)
                #expect(again.status == .ok, "\(harness.text(again))")
            }
        }
    }
}
