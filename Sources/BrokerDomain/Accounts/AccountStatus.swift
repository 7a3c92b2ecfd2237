import Foundation

package enum AccountStatus: String, Sendable {
    case pending, active
}
