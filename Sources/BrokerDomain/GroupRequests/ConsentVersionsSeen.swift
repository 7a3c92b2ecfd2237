import Synchronization

/// The consent versions (migration 0051) a group evaluation's reads on a standby saw: each read on its own
/// connection, just before its cohort or cells statement and on the same server, so each names a state no
/// newer than the one its statement read, even when the standby pool moved to another host between reads.
/// Under the ledger lock every one must equal the primary's version: then no withdrawal of consent has been
/// committed since any of the reads' states.
package final class ConsentVersionsSeen: Sendable {
    private let versions = Mutex<[Int64]>([])

    func note(_ version: Int64) { versions.withLock { $0.append(version) } }

    /// Whether every read saw `current`, the primary's version now.
    func allSaw(_ current: Int64) -> Bool { versions.withLock { $0.allSatisfy { $0 == current } } }
}
