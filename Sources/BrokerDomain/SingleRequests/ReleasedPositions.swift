import Foundation

/// A chunk of released positions in arrival order.
struct ReleasedPositions: ReleasedRows {
    var positions: [Position]
    var lastArrival: Int64
    var count: Int { positions.count }
}
