/// Which server of a multi-host `DatabaseURL` will do: libpq's `target_session_attrs`, with its values and
/// meanings (PostgreSQL's documentation, "Parameter Key Words").
package enum TargetSessionAttributes: String, Sendable, CaseIterable {
    /// The first host that answers.
    case any
    /// One whose sessions accept writes by default: not in recovery, `default_transaction_read_only` off.
    case readWrite = "read-write"
    /// One whose sessions are read-only by default (a standby, or a server set read-only).
    case readOnly = "read-only"
    /// One not in recovery.
    case primary
    /// One in recovery (a standby).
    case standby
    /// A standby if one answers, otherwise any host.
    case preferStandby = "prefer-standby"

    /// Whether a server that reports `inRecovery` and `readOnly` will do (for `preferStandby`: whether it is
    /// the preferred kind; `HostSelection` falls back to any host).
    func accepts(inRecovery: Bool, readOnly: Bool) -> Bool {
        switch self {
        case .any: true
        case .readWrite: !inRecovery && !readOnly
        case .readOnly: inRecovery || readOnly
        case .primary: !inRecovery
        case .standby, .preferStandby: inRecovery
        }
    }
}
