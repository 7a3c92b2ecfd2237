import Crypto
import Foundation

package enum MetricsAccessError: Error {
    case disabled
    case wrongToken
}
