import BrokerDomain
import BrokerTestSupport
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// Why a synthetic population cannot be written as asked.
package enum SyntheticPopulationError: Error, Sendable, CustomStringConvertible {
    case invalid(String)

    package var description: String {
        switch self {
        case .invalid(let reason): reason
        }
    }
}
