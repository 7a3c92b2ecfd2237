import Logging
import PostgresNIO
import PostgresStatements
import Synchronization

extension PostgresConnection {
    /// The rows of a statement prepared once per connection (PostgresNIO keeps it by name on the connection).
    ///
    /// PostgresNIO also keeps a statement whose preparation failed: every later execute of that name on the
    /// connection answers the same error, for as long as the connection lives. A Parse that waited past
    /// `lock_timeout` behind a migration's lock would so fail every upload leased onto that connection. So a
    /// statement that fails before it has ever run on this connection marks the connection, and
    /// `DatabasePool.withConnection` closes it when its lease ends, so the pool opens a fresh one; the error
    /// still reaches the caller. (Not closed here: the caller's transaction, an import's, is still under way
    /// on it, and closing a connection in mid-transaction stalled such an import.) Once it has run, its failures
    /// are its execution's (a lock or statement timeout under load) and the connection is kept: closing it
    /// then would make an overload worse with reconnections and fresh preparations. The statement's own
    /// "store me in a transaction" (`upload_needs_transaction`) never closes it: the caller expects it.
    func preparedRows<Statement: PostgresPreparedStatement>(_ statement: Statement, logger: Logger) async throws -> [Statement.Row]
    where Statement.Row: Sendable {
        let connection = ObjectIdentifier(self)
        do {
            let rows = try await unstrandedRows(statement, logger: logger)
            let firstOnConnection = statementsThatRan.withLock { ran in
                defer { ran[connection, default: []].insert(Statement.name) }
                return ran[connection] == nil
            }
            // Forgotten as the connection closes (it is still alive then, so its identifier is not yet reused).
            if firstOnConnection { closeFuture.whenComplete { _ in statementsThatRan.withLock { $0[connection] = nil } } }
            return rows
        } catch {
            let ran = statementsThatRan.withLock { $0[connection]?.contains(Statement.name) ?? false }
            if !ran && !PostgresErrors.uploadNeedsTransaction(error) { _ = connectionsToClose.withLock { $0.insert(connection) } }
            throw error
        }
    }

    /// The one row a prepared statement answers (`AccountStoreError.noRow` when it answered none).
    func preparedRow<Statement: PostgresPreparedStatement>(_ statement: Statement, logger: Logger) async throws -> Statement.Row
    where Statement.Row: Sendable {
        guard let row = try await preparedRows(statement, logger: logger).last else { throw AccountStoreError.noRow }
        return row
    }

    /// Whether `preparedRows` marked this connection to be closed as its lease ends (and forgets the mark).
    func takeCloseMark() -> Bool {
        connectionsToClose.withLock { $0.remove(ObjectIdentifier(self)) != nil }
    }
}

/// Per open connection, the prepared statements that have run on it at least once (`preparedRows`).
private let statementsThatRan = Mutex<[ObjectIdentifier: Set<String>]>([:])
/// Connections on which a statement failed before it ever ran: closed as their lease ends.
private let connectionsToClose = Mutex<Set<ObjectIdentifier>>([])
