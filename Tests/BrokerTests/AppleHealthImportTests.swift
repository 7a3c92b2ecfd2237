import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import Broker

/// `POST /v1/me/imports/apple-health` and `d4h import apple-health`, end to end: the parser's own tests are in
/// AppleHealthParserTests; these check what a person notices — what is stored, and that bad files store nothing.
@Suite("Apple Health import", .serialized)
struct AppleHealthImportTests {
    static let exportXML = Array(AppleHealthParserTests.export.utf8)

    static func post(_ harness: TestHarness, _ bytes: [UInt8], contentType: String, token: String?) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: contentType]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await harness.client.execute(
            uri: "/v1/me/imports/apple-health", method: .post, headers: headers, body: ByteBuffer(bytes: bytes))
    }

    static func storedSamples(_ harness: TestHarness) async throws -> Int {
        try await harness.sql("SELECT count(*) FROM samples").first?.decode(Int.self) ?? -1
    }

    @Test("an export.xml is imported with units converted; importing it again stores nothing new")
    func importXMLTwice() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let first = try await Self.post(harness, Self.exportXML, contentType: "application/xml", token: token)
            #expect(first.status == .ok, "\(harness.text(first))")
            let body = try harness.object(first)
            let accepted = try #require(body["accepted"] as? Int)
            #expect(accepted == AppleHealthParserTests.expectedSamples.count)
            let skipped = try #require(body["skipped"] as? [String: Int])
            #expect(skipped["HKQuantityTypeIdentifierBasalEnergyBurned"] == 2)
            #expect(try await Self.storedSamples(harness) == accepted)

            // 154.3 lb is 69.99 kg; the heart rate at 08:15 +01:00 is 07:15Z.
            let weight = try harness.object(try await harness.request(.get, "/v1/me/samples?type=weight", token: token))
            let weights = try #require(weight["items"] as? [[String: Any]])
            #expect(abs((weights.first?["value"] as? Double ?? 0) - 69.989) < 0.01)
            let heart = try harness.object(try await harness.request(.get, "/v1/me/samples?type=heart_rate", token: token))
            #expect((heart["items"] as? [[String: Any]])?.first?["at"] as? String == "2024-03-01T07:15:00Z")

            let again = try harness.object(try await Self.post(harness, Self.exportXML, contentType: "application/xml", token: token))
            #expect(again["accepted"] as? Int == 0)
            #expect(again["duplicates"] as? Int == accepted + (body["duplicates"] as? Int ?? 0))
            #expect(try await Self.storedSamples(harness) == accepted)
        }
    }

    @Test("the export.zip an iPhone produces imports the same samples as its export.xml")
    func importZip() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let zip = AppleHealthArchiveTests.zip([
                .init(path: "apple_health_export/export_cda.xml", data: Array("<ClinicalDocument/>".utf8)),
                .init(path: "apple_health_export/export.xml", data: Self.exportXML),
            ])
            let response = try await Self.post(harness, zip, contentType: "application/zip", token: token)
            #expect(response.status == .ok, "\(harness.text(response))")
            #expect(try harness.object(response)["accepted"] as? Int == AppleHealthParserTests.expectedSamples.count)
        }
    }

    @Test("files that cannot be imported answer 422 and store nothing; the server stays healthy")
    func badFiles() async throws {
        let truncated = Array(Self.exportXML.prefix(Self.exportXML.count * 2 / 3))
        let laughs = Array("""
            <?xml version="1.0"?>
            <!DOCTYPE HealthData [
             <!ENTITY lol "lol">
             <!ENTITY lol9 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
            ]>
            <HealthData><Record type="&lol9;"/></HealthData>
            """.utf8)
        let zeros = [UInt8](repeating: 0, count: 8 << 20)
        let cases: [(String, [UInt8], String)] = [
            ("truncated halfway", truncated, "application/xml"),
            ("not Apple Health", Array("<html><body>hello</body></html>".utf8), "application/xml"),
            ("billion laughs", laughs, "application/xml"),
            ("zip without export.xml", AppleHealthArchiveTests.zip([.init(path: "notes.txt", data: Array("hi".utf8))]), "application/zip"),
            ("zip bomb", AppleHealthArchiveTests.zip([.init(path: "apple_health_export/export.xml", data: zeros)]), "application/zip"),
            ("not a zip", Array("PK but not really a zip archive".utf8), "application/zip"),
        ]
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            for (name, bytes, contentType) in cases {
                let response = try await Self.post(harness, bytes, contentType: contentType, token: token)
                #expect(response.status == .unprocessableContent, "\(name): \(response.status) \(harness.text(response))")
                #expect(response.headers[.contentType] == "application/problem+json", "\(name)")
                #expect(harness.text(response).contains("Nothing from this file was stored"), "\(name)")
            }
            #expect(try await Self.storedSamples(harness) == 0)
            #expect(try await harness.request(.get, "/health/ready").status == .ok)
            // Still serving imports after all that.
            #expect(try await Self.post(harness, Self.exportXML, contentType: "application/xml", token: token).status == .ok)
        }
    }

    @Test("only people import; other content types are 415; no token is 401")
    func rolesAndMediaTypes() async throws {
        try await TestHarness.run { harness in
            let company = try await harness.activeCompany()
            #expect(try await Self.post(harness, Self.exportXML, contentType: "application/xml", token: company).status == .forbidden)
            #expect(try await Self.post(harness, Self.exportXML, contentType: "application/xml", token: nil).status == .unauthorized)
            let person = try await harness.activeUser()
            #expect(try await Self.post(harness, Self.exportXML, contentType: "text/plain", token: person).status == .unsupportedMediaType)
        }
    }

    @Test("`d4h import apple-health --email` imports for that person, and refuses an unknown email")
    func commandLine() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).xml")
            try Data(Self.exportXML).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let run = try await CLITests.d4h(
                ["import", "apple-health", "--email", person.email, file.path], environment: ["DATABASE_URL": harness.databaseURL.text])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("Imported \(AppleHealthParserTests.expectedSamples.count) samples"))
            #expect(try await Self.storedSamples(harness) == AppleHealthParserTests.expectedSamples.count)
            let unknown = try await CLITests.d4h(
                ["import", "apple-health", "--email", "nobody@example.com", file.path], environment: ["DATABASE_URL": harness.databaseURL.text])
            #expect(unknown.status != 0)
        }
    }
}
