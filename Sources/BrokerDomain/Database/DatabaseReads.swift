import ServiceLifecycle

/// Where reads that may lag go (issue 34, `DATABASE_READ_URL`): a standby while `ReplicaStaleness` says its
/// data is at most `DATABASE_READ_MAX_STALENESS` old, otherwise the primary. Only reads whose use tolerates
/// that age take it: a group request's first evaluation (whose consent is checked again on the primary under
/// the ledger lock). Everything a person or company changes, and the privacy ledger, stay on the primary.
package struct DatabaseReads: Sendable {
    package let primary: DatabasePool
    let replica: DatabasePool?
    let staleness: ReplicaStaleness?
    /// Whether the replica may be read now (its staleness within the bound).
    private let replicaUsable: @Sendable () -> Bool

    /// No standby: every read on the primary.
    package init(primary: DatabasePool) {
        self.primary = primary
        self.replica = nil
        self.staleness = nil
        self.replicaUsable = { false }
    }

    package init(primary: DatabasePool, replica: DatabasePool, staleness: ReplicaStaleness) {
        self.primary = primary
        self.replica = replica
        self.staleness = staleness
        self.replicaUsable = { staleness.usable }
    }

    /// `replica` is read whenever `usable` says so, with nothing measured: for tests that make a standby's lag
    /// by hand (a change committed on the primary between a read and the ledger lock).
    package init(primary: DatabasePool, replica: DatabasePool, usable: @escaping @Sendable () -> Bool) {
        self.primary = primary
        self.replica = replica
        self.staleness = nil
        self.replicaUsable = usable
    }

    /// What must run beside the server for the standby to be used: its pool, then its staleness measure.
    package var services: [any Service] {
        guard let replica, let staleness else { return [] }
        return [replica, staleness]
    }

    /// The pool to read from now, and whether it is the standby's.
    package func source() -> (pool: DatabasePool, onStandby: Bool) {
        if let replica, replicaUsable() { return (replica, true) }
        return (primary, false)
    }
}
