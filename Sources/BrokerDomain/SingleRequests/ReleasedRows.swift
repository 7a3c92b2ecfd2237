/// Rows of one download chunk as read from PostgreSQL, in arrival order.
protocol ReleasedRows: Sendable {
    var count: Int { get }
    /// The arrival number of the chunk's last row: where the next chunk starts.
    var lastArrival: Int64 { get }
}
