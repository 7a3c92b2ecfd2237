import Foundation

/// A change of notification preferences that cannot be made.
package enum MailPreferenceError: Error, Equatable {
    /// Kinds this account's role never receives.
    case notReceived([String])
}
