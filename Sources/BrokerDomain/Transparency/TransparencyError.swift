import Foundation

/// What can go wrong with blocks.
package enum TransparencyError: Error, Equatable {
    case companyNotFound
    case notBlocked
}
