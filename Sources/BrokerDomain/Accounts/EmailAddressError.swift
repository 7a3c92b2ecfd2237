import Foundation

/// Why a string is not an acceptable email address.
package enum EmailAddressError: Error, Sendable, Hashable {
    case empty
    case forbiddenCharacter
    case tooLong
    case notOneAtSign
    case emptyLocalPart
    case localPartTooLong
    case badLocalPart
    case badDomain

    /// Suitable as a field-level message in a 422 answer.
    package var message: String {
        switch self {
        case .empty: "must not be empty"
        case .forbiddenCharacter: "must not contain spaces or control characters"
        case .tooLong: "must be at most \(EmailAddress.maximumLength) characters"
        case .notOneAtSign: "must contain exactly one @"
        case .emptyLocalPart: "must have a name before the @"
        case .localPartTooLong: "the part before the @ must be at most \(EmailAddress.maximumLocalPartLength) characters"
        case .badLocalPart: "the part before the @ may hold only letters, digits, single inner dots and !#$%&'*+-/=?^_`{|}~"
        case .badDomain: "the part after the @ must be a domain name such as example.com"
        }
    }
}
