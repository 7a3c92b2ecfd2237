import Logging
import NIOCore
import PostgresNIO
import PostgresStatements
import Synchronization

extension PostgresConnection {
    /// COPYs `items` into `table` (text format), one line each as `line` writes it (tab-separated, ending in a
    /// newline), sent in pieces of about 200 KiB. Through `StrandedStatements`, as every statement of this
    /// module: PostgresNIO's `copyFrom` would wait for ever on a connection that closed under it.
    func copyLines<Items: Sequence & Sendable>(
        _ items: Items, into table: String, columns: [String], logger: Logger, file: String = #fileID, line number: Int = #line,
        line: @escaping @Sendable (Items.Element, inout ByteBuffer) -> Void
    ) async throws {
        // A COPY the guard gave up on stays suspended in PostgresNIO for good, with what its closure holds: the
        // batch is handed over through a box that is emptied once this returns, so it is not kept with it.
        let batch = Handover(items)
        defer { batch.empty() }
        try await unstrandedCopyFrom(table: table, columns: columns, logger: logger, file: file, line: number) { writer in
            guard let items = batch.take() else { return }
            var buffer = ByteBuffer()
            buffer.reserveCapacity(256 * 1024)
            for item in items {
                line(item, &buffer)
                if buffer.readableBytes > 200 * 1024 {
                    try await writer.write(buffer)
                    buffer.clear()
                }
            }
            if buffer.readableBytes > 0 { try await writer.write(buffer) }
        }
    }
}

/// A value handed over once (`take`), or given up (`empty`) if it never was.
private final class Handover<Value: Sendable>: Sendable {
    private let value: Mutex<Value?>

    init(_ value: Value) { self.value = Mutex(value) }

    func take() -> Value? {
        value.withLock { value in
            defer { value = nil }
            return value
        }
    }

    func empty() { value.withLock { $0 = nil } }
}
