import Foundation

/// Why a string is not a valid VAT number.
package enum VATNumberError: Error, Sendable, Hashable {
    case wrongLength
    case notDigits
    case allZeros
    case badCheckDigit

    /// Suitable as a field-level message in a 422 answer.
    package var message: String {
        switch self {
        case .wrongLength: "must be 11 digits"
        case .notDigits: "must contain only digits"
        case .allZeros: "must not be all zeros"
        case .badCheckDigit: "check digit does not match"
        }
    }
}
