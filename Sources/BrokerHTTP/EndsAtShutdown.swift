import ServiceLifecycle

/// A response body that ends when the server shuts down gracefully: a spectator's event stream lasts as
/// long as the run, and the server's stop waits for every response under way, so without this one open
/// page would hold a stopping server for hours.
struct EndsAtShutdown<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element: Sendable {
    typealias Element = Base.Element
    let base: Base
    let stop: @Sendable () -> Void

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), stop: stop) }

    struct Iterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let stop: @Sendable () -> Void

        mutating func next() async throws -> Element? {
            var iterator = base
            let element = try await withGracefulShutdownHandler {
                try await iterator.next()
            } onGracefulShutdown: { [stop] in
                stop()
            }
            base = iterator
            return element
        }
    }
}
