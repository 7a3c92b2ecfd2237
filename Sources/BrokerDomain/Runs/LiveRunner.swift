import Foundation
import Logging
import PostgresNIO

/// A runner as spectators see them: bib, public name, where and when.
package struct LiveRunner: Sendable, Equatable {
    package var bib: Int
    package var name: String
    package var point: GeoPoint
    package var at: Date
    package var finished: Bool
}
