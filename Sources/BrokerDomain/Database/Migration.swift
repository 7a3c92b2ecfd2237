import Crypto
import Foundation

/// One forward-only schema file, `Schema/NNNN_snake_case.sql`.
package struct Migration: Sendable, Equatable {
    package let version: Int
    package let name: String
    package let sql: String

    /// SHA-256 of the file's text: an edited landed file no longer matches what was recorded.
    package var checksum: String {
        SHA256.hash(data: Data(sql.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The file's statements: PostgreSQL's extended protocol runs one statement at a time, so files
    /// separate statements with a line `-- split` (docs/architecture.md, convention 6).
    package var statements: [String] {
        var statements: [String] = []
        var current: [Substring] = []
        func flush() {
            let meaningful = current.contains { line in
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                return !trimmed.isEmpty && !trimmed.hasPrefix("--")
            }
            if meaningful { statements.append(current.joined(separator: "\n")) }
            current = []
        }
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces) == "-- split" { flush() } else { current.append(line) }
        }
        flush()
        return statements
    }

    package init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// Every `NNNN_name.sql` file of a directory, in version order; other files are ignored.
    package static func load(from directory: URL) throws -> [Migration] {
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
        var migrations: [Migration] = []
        for file in files where file.pathExtension == "sql" {
            let stem = file.deletingPathExtension().lastPathComponent
            guard let separator = stem.firstIndex(of: "_"), let version = Int(stem[..<separator]) else {
                throw MigrationError.badFileName(file.lastPathComponent)
            }
            let sql = try String(contentsOf: file, encoding: .utf8)
            migrations.append(Migration(version: version, name: String(stem[stem.index(after: separator)...]), sql: sql))
        }
        migrations.sort { $0.version < $1.version }
        for (earlier, later) in zip(migrations, migrations.dropFirst()) where earlier.version == later.version {
            throw MigrationError.duplicateVersion(later.version)
        }
        return migrations
    }

    /// The migrations shipped inside the Broker module (a copy of the repository's `Schema/`).
    package static func bundled() throws -> [Migration] {
        guard let directory = Bundle.module.url(forResource: "Schema", withExtension: nil) else {
            throw MigrationError.bundleMissing
        }
        return try load(from: directory)
    }
}
