/// A programming error: code asked the pool for a connection while its task held one (see `DatabasePool`).
package struct NestedLease: Error, CustomStringConvertible {
    package let heldAt: String
    package let requestedAt: String
    package var description: String { "nested database lease: requested at \(requestedAt) while holding the one taken at \(heldAt)" }
}
