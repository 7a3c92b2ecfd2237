import Foundation

/// Why migrating, or serving on a database, is refused.
package enum MigrationError: Error, CustomStringConvertible, Equatable {
    case badFileName(String)
    case duplicateVersion(Int)
    case bundleMissing
    case editedAfterApplying(version: Int, name: String)
    case unknownAppliedVersion(Int)
    case schemaBehind(applied: Int, expected: Int)
    case failed(version: Int, name: String, message: String)

    package var description: String {
        switch self {
        case .badFileName(let file): "schema file \(file) is not named NNNN_name.sql"
        case .duplicateVersion(let version): "two schema files have version \(version)"
        case .bundleMissing: "the bundled Schema directory is missing from this build"
        case .editedAfterApplying(let version, let name):
            "schema file \(String(format: "%04d", version))_\(name).sql was edited after it was applied; landed migrations are never edited — add a new one instead"
        case .unknownAppliedVersion(let version):
            "the database has migration \(version) applied, which this build does not know (is the server older than the database?)"
        case .failed(let version, let name, let message):
            "migration \(String(format: "%04d", version))_\(name).sql failed and was rolled back: \(message)"
        case .schemaBehind(let applied, let expected):
            "the database schema is at version \(applied) but this server needs \(expected); run `d4h migrate` first"
        }
    }
}
