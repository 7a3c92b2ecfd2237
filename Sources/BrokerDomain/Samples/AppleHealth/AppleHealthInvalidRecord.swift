/// A record of a type Data4Help keeps whose value, unit or date cannot be used (not a number, an unknown unit,
/// out of the type's range, in the future …), with where it is, so that a person can find it in export.xml.
package struct AppleHealthInvalidRecord: Sendable, Equatable, Codable {
    /// The line of export.xml on which the record starts (1-based).
    package var line: Int
    package var identifier: String
    /// What is wrong with it, in words.
    package var reason: String

    package init(line: Int, identifier: String, reason: String) {
        self.line = line
        self.identifier = identifier
        self.reason = reason
    }
}
