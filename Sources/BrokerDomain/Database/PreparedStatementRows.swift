import Logging
import PostgresNIO

extension PostgresConnection {
    /// The rows of a statement prepared once per connection (PostgresNIO keeps it by name on the connection).
    ///
    /// PostgresNIO also keeps a statement whose preparation failed: every later execute of that name on the
    /// connection answers the same error, for as long as the connection lives. A Parse that waited past
    /// `lock_timeout` behind a migration's lock would so fail every upload leased onto that connection. So any
    /// error but the statement's own "store me in a transaction" (`upload_needs_transaction`, which the caller
    /// expects) closes the connection, and the pool opens a fresh one for the next lease. The error still
    /// reaches the caller: this request fails as it would have; the next ones do not.
    func preparedRows<Statement: PostgresPreparedStatement>(_ statement: Statement, logger: Logger) async throws -> [Statement.Row] {
        do {
            var rows: [Statement.Row] = []
            for try await row in try await execute(statement, logger: logger) { rows.append(row) }
            return rows
        } catch {
            if !PostgresErrors.uploadNeedsTransaction(error) { try? await close() }
            throw error
        }
    }

    /// The one row a prepared statement answers (`AccountStoreError.noRow` when it answered none).
    func preparedRow<Statement: PostgresPreparedStatement>(_ statement: Statement, logger: Logger) async throws -> Statement.Row {
        guard let row = try await preparedRows(statement, logger: logger).last else { throw AccountStoreError.noRow }
        return row
    }
}
