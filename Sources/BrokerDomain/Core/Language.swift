import Foundation

/// The languages the service speaks: an account's choice, or a visitor's `Accept-Language`.
package enum Language: String, Sendable, CaseIterable, Codable {
    case en, it

    /// The locale its dates and numbers are written in.
    package var locale: Locale { Locale(identifier: self == .it ? "it_IT" : "en_GB") }
}
