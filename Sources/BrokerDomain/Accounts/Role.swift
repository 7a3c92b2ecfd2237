import Foundation

/// Who an account belongs to; each role sees and does different things.
package enum Role: String, Sendable, CaseIterable {
    case user
    case thirdParty = "third_party"
    case auditor
}
