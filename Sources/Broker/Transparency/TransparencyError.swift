import Foundation

/// What can go wrong with blocks.
public enum TransparencyError: Error, Equatable {
    case companyNotFound
    case notBlocked
}
