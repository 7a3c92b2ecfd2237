import Foundation

/// What can go wrong with health data, each with the status the contract gives it.
package enum SampleError: Error, Equatable {
    case invalid([FieldError])
    case notAUser
    case importFailed(String)
}
