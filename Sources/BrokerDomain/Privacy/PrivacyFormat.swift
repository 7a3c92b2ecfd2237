import Foundation

package enum PrivacyFormat {
    package static func rho(_ value: Double) -> String { String(format: "%.6g", value) }
}
