import Foundation
import Logging
import PostgresNIO

/// A company a person blocked.
package struct Block: Sendable, Equatable {
    package var thirdParty: SingleRequest.ThirdParty
    package var blockedAt: Date
}
