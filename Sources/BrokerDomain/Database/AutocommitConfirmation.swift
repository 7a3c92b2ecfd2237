import Logging
import PostgresNIO

extension PostgresConnection {
    /// Returns once the server has finished the statement sent before on this connection, its commit
    /// included: for a write sent on its own, outside a transaction, whose result must not be acknowledged
    /// before it is durable (`SampleStore.ingestAlone`, `PositionStore.ingestAlone`).
    ///
    /// Why it is needed. Such a statement is committed at the protocol's Sync, after its rows and
    /// CommandComplete were written to the server's output buffer, and the commit then waits for the
    /// synchronous standby. PostgresNIO answers the statement at CommandComplete, and the server normally
    /// flushes its buffer only with ReadyForQuery, after that wait. But a backend told to stop during the wait
    /// (SIGTERM: a fast shutdown or a demotion of a primary cut off from its standby; SIGQUIT: another backend
    /// crashed) sends a warning, and that flushes the buffer, result included, for a commit that may never
    /// reach the standby: `make faults FAULTS_ONLY=failover` saw a batch acknowledged 51 ms after the primary's
    /// processes began to be killed, then missing on the promoted secondary. PostgresNIO writes the next
    /// statement only after ReadyForQuery, which the server sends only after the wait, so this one's answer
    /// means the commit is replicated; a backend that stopped never sends it, and this fails (a 503: the
    /// client sends again, and the upload's samples are not stored twice).
    func confirmAutocommit(logger: Logger) async throws {
        _ = try await preparedRows(Confirmation(), logger: logger)
    }
}

/// `confirmAutocommit`'s statement, prepared once per connection: nothing of it is planned per upload.
private struct Confirmation: PostgresPreparedStatement {
    static let name = "d4h_confirm_autocommit"
    static let sql = "SELECT 1"
    typealias Row = Int32

    func makeBindings() -> PostgresBindings { PostgresBindings() }
    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int32.self) }
}
