import Foundation

/// A way in which a valid fiscal code disagrees with the declared birth date or sex.
package enum FiscalCodeMismatch: Sendable, Hashable, CaseIterable {
    case birthYear
    case birthMonth
    case birthDay
    case sex

    /// Suitable as a field-level message on `fiscalCode` in a 422 answer.
    package var message: String {
        switch self {
        case .birthYear: "does not agree with the year of birthDate"
        case .birthMonth: "does not agree with the month of birthDate"
        case .birthDay: "does not agree with the day of birthDate"
        case .sex: "does not agree with sex"
        }
    }
}
