import Foundation

/// The migrations that create the secret have not run on this database.
struct ServerSecretMissing: Error, CustomStringConvertible {
    let name: String
    var description: String { "server secret '\(name)' is missing: run `d4h migrate`" }
}
