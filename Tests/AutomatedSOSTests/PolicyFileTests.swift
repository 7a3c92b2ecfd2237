import AutomatedSOS
import Foundation
import Testing

/// The policy's JSON form (docs/automated-sos.md) and its error messages: file, line and field.
@Suite struct PolicyFileTests {
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/examples/sos-policy.json")

    @Test func theDocumentedExampleIsTheDefaultPolicy() throws {
        #expect(try SOSPolicy.load(contentsOf: Self.example) == .default)
    }

    @Test func thePolicyRoundTripsInTheDocumentedForm() throws {
        let data = try JSONEncoder().encode(SOSPolicy.default)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""threshold":"heart_rate_low""#))
        #expect(text.contains(#""threshold":140"#))
        #expect(try SOSPolicy.decode(data, file: "x") == .default)
    }

    @Test func omittedFieldsTakeTheirDefaults() throws {
        let policy = try SOSPolicy.decode(
            Data(#"{"rules":[{"id":"r","type":"heart_rate","comparison":"above","threshold":150}]}"#.utf8), file: "p.json")
        #expect(policy == SOSPolicy(rules: [SOSRule(id: "r", type: .heartRate, comparison: .above, threshold: .constant(150))]))
        #expect(policy.activity == .default)
        #expect(policy.rules[0].persistence == .default && policy.rules[0].cooldown == 900 && !policy.rules[0].suppressedWhileActive)
    }

    /// Settings stored before the documented form (`{"constant":{"_0":93}}`) still load.
    @Test func theEarlierSynthesizedFormStillLoads() throws {
        let legacy = #"""
            {"rules":[{"id":"a","type":"heart_rate","comparison":"below","threshold":{"heartRateLow":{}},"persistence":{"readings":2,"within":300},"cooldown":900,"suppressedWhileActive":false},
            {"id":"b","type":"oxygen_saturation","comparison":"below","threshold":{"constant":{"_0":93}},"persistence":{"readings":2,"within":300},"cooldown":900,"suppressedWhileActive":false}],
            "activity":{"stepThreshold":200,"window":600}}
            """#
        let policy = try SOSPolicy.decode(Data(legacy.utf8), file: "settings.json")
        #expect(policy.rules.map(\.threshold) == [.heartRateLow, .constant(93)])
        #expect(policy.activity == .default)
    }

    struct Malformed: Sendable, CustomTestStringConvertible {
        var name: String
        var text: String
        var line: Int?
        var field: String?
        var reason: String
        var testDescription: String { name }
    }

    static let rule0 = #"    {"id": "heart_rate_low", "type": "heart_rate", "comparison": "below", "threshold": "heart_rate_low"},"#

    static let malformed: [Malformed] = [
        Malformed(
            name: "syntax error", text: "{\n  \"rules\": [\n\(rule0)\n    {\"id\": \"x\" \"type\": \"heart_rate\"}\n  ]\n}\n",
            line: 4, field: nil, reason: "not valid JSON: expected ',' or '}' after a field"),
        Malformed(name: "unclosed", text: "{\n  \"rules\": [\n\(rule0)\n", line: 4, field: nil, reason: "not valid JSON: unexpected end of the file"),
        Malformed(
            name: "wrong type",
            text:
                "{\n  \"rules\": [\n\(rule0)\n    {\"id\": \"x\", \"type\": \"heart_rate\", \"comparison\": \"above\",\n     \"threshold\": 150, \"cooldown\": \"soon\"}\n  ]\n}\n",
            line: 5, field: "rules[1].cooldown", reason: "Expected to decode Double but found a string"),
        Malformed(
            name: "missing field",
            text: "{\n  \"rules\": [\n\(rule0)\n    {\"id\": \"x\", \"type\": \"heart_rate\",\n     \"comparison\": \"above\"}\n  ]\n}\n",
            line: 4, field: "rules[1].threshold", reason: "missing"),
        Malformed(
            name: "unknown sample type",
            text:
                "{\n  \"rules\": [\n\(rule0)\n\n    {\"id\": \"x\", \"type\": \"heart_rat\", \"comparison\": \"above\", \"threshold\": 150}\n  ]\n}\n",
            line: 5, field: "rules[1].type", reason: "unknown sample type \"heart_rat\""),
        Malformed(
            name: "unknown comparison",
            text: "{\"rules\": [\n{\"id\": \"x\", \"type\": \"heart_rate\",\n\"comparison\": \"over\", \"threshold\": 150}]}",
            line: 3, field: "rules[0].comparison", reason: "unknown comparison \"over\""),
        Malformed(
            name: "unknown threshold table",
            text: "{\"rules\": [{\"id\": \"x\", \"type\": \"heart_rate\", \"comparison\": \"above\",\n\"threshold\": \"heart_rate_max\"}]}",
            line: 2, field: "rules[0].threshold", reason: "unknown threshold \"heart_rate_max\""),
        Malformed(
            name: "misspelt field", text: "{\"rules\": [],\n \"activity\": {\"stepThreshold\": 100,\n \"windw\": 60}}",
            line: 3, field: "activity.windw", reason: "unknown field \"windw\""),
        Malformed(
            name: "impossible persistence",
            text:
                "{\"rules\": [{\"id\": \"x\", \"type\": \"heart_rate\", \"comparison\": \"above\", \"threshold\": 1,\n \"persistence\": {\"readings\": 0}}]}",
            line: 2, field: "rules[0].persistence.readings", reason: "must be at least 1"),
        Malformed(name: "not an object", text: "[]", line: 1, field: nil, reason: "Expected to decode Dictionary"),
    ]

    @Test(arguments: malformed)
    func aMalformedPolicyNamesTheFileTheLineAndTheField(_ c: Malformed) throws {
        let url = try temporaryDirectory().appendingPathComponent("my-policy.json")
        try Data(c.text.utf8).write(to: url)
        do {
            _ = try SOSPolicy.load(contentsOf: url)
            Issue.record("decoded")
        } catch {
            #expect(error.file == url.path)
            #expect(error.line == c.line, "\(error)")
            #expect(error.field == c.field, "\(error)")
            #expect(error.reason.contains(c.reason), "\(error)")
            #expect(error.description.hasPrefix("\(url.path):\(c.line.map(String.init) ?? "")"), "\(error)")
        }
    }

    @Test func anUnreadableFileIsNamed() {
        #expect(throws: SOSPolicyError.self) { try SOSPolicy.load(contentsOf: URL(fileURLWithPath: "/nonexistent/policy.json")) }
    }
}
