import Foundation
import Testing

/// What the audit suites share.
enum AuditFixtures {
    /// A fresh signing key made by `d4h audit keygen`; returns the file and the public key it printed.
    static func signingKey() async throws -> (file: URL, publicKey: String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-audit-\(UUID().uuidString).key")
        let run = try await D4HCommand.run(["audit", "keygen", file.path], environment: [:])
        try #require(run.status == 0, "\(run.output)")
        let publicKey = try #require(
            run.output.split(separator: "\n").first { $0.hasPrefix("public key: ") }.map { String($0.dropFirst("public key: ".count)) },
            "\(run.output)")
        return (file, publicKey)
    }
}
