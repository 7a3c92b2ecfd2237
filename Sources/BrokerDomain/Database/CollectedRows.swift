import PostgresNIO

/// The rows of one statement, already read: iterated like PostgresNIO's row sequence (`for try await`,
/// `collect()`, `decode(…)`), so stores read the same either way.
package struct CollectedRows: AsyncSequence, Sendable {
    package typealias Element = PostgresRow
    package let rows: [PostgresRow]

    package func collect() async throws -> [PostgresRow] { rows }

    package func decode<each Column: PostgresDecodable>(_: (repeat each Column).Type) -> AsyncThrowingMapSequence<Self, (repeat each Column)> {
        map { try $0.decode((repeat each Column).self) }
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: IndexingIterator<[PostgresRow]>
        package mutating func next() async throws -> PostgresRow? { remaining.next() }
    }

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(remaining: rows.makeIterator()) }
}
