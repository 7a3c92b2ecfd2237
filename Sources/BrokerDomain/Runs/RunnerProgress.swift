import Foundation
import Logging
import PostgresNIO

/// A runner's positions not yet looked at, in time order, and where they stand on the path so far.
struct RunnerProgress: Sendable {
    var run: UUID
    var user: UUID
    var halfwayAt: Date?
    var fixes: [(at: Date, point: GeoPoint)]
    var lastArrival: Int64
}
