import Foundation

/// Why a string is not a valid fiscal code.
package enum FiscalCodeError: Error, Sendable, Hashable {
    case wrongLength
    case badLayout
    case badMonth
    case badDay
    case badCheckCharacter

    /// Suitable as a field-level message in a 422 answer.
    package var message: String {
        switch self {
        case .wrongLength: "must be 16 characters"
        case .badLayout: "must be 6 letters, 2 digits, a month letter, 2 digits, a letter, 3 digits and a check letter"
        case .badMonth: "month letter must be one of A B C D E H L M P R S T"
        case .badDay: "day must be 01-31, or 41-71 for women"
        case .badCheckCharacter: "check character does not match"
        }
    }
}
