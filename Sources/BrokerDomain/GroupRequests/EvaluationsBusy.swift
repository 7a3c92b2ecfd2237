import Foundation
import Synchronization

/// Every evaluation slot stayed taken for the whole wait: too many group requests are being evaluated.
package struct EvaluationsBusy: Error, CustomStringConvertible {
    package let waited: Duration
    package var description: String { "no group evaluation slot became free within \(waited)" }
}
