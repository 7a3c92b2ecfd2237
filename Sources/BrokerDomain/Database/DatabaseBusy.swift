/// Every pooled connection stayed busy for the whole lease timeout: the server is overloaded right now,
/// and the caller is told to come back (503 with `Retry-After`) instead of queueing without end.
package struct DatabaseBusy: Error, CustomStringConvertible {
    package let waited: Duration
    package var description: String { "no database connection became free within \(waited)" }
}
