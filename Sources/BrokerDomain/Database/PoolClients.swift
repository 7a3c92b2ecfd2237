import PostgresNIO
import Synchronization

/// The PostgresNIO clients of a `DatabasePool`: the one new leases go to, and every one started, for the
/// pool's `run()` to run. There is more than one only while a client retired by a move finishes its leases.
final class PoolClients: Sendable {
    /// One client, the host it connects to, whether its `run()` has begun, and what retires it.
    final class Generation: Sendable {
        let client: PostgresClient
        let host: DatabaseHost?
        /// Set as `run()` begins: a lease asked for before waits for it (within the lease's bound) rather
        /// than reach PostgresNIO first, which then warns that `run()` was not called.
        let started = Atomic<Bool>(false)
        private let retirement = Latch()
        private let replacement = Latch()

        init(client: PostgresClient, host: DatabaseHost?) {
            self.client = client
            self.host = host
        }

        /// Returns once another generation has replaced this one, or when the calling task is cancelled.
        func waitUntilReplaced() async { await replacement.wait() }

        /// Runs the client until `retire()` or until the calling task is cancelled; either closes its connections.
        func run() async {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [self] in
                    started.store(true, ordering: .releasing)
                    await client.run()
                }
                group.addTask { [retirement] in await retirement.wait() }
                await group.next()
                group.cancelAll()
            }
        }

        func retire() { retirement.fire() }

        fileprivate func markReplaced() { replacement.fire() }
    }

    /// Leases asked for and not yet ended (waiting for a connection, or holding one), across generations:
    /// what the pool's stop waits for (`DatabasePool.run`).
    let leasesInFlight = Atomic<Int>(0)

    private let state: Mutex<Generation>
    /// Every generation, the first included, in the order they were made (read once, by the pool's `run()`).
    let generations: AsyncStream<Generation>
    private let started: AsyncStream<Generation>.Continuation

    init(first client: PostgresClient, host: DatabaseHost?) {
        let generation = Generation(client: client, host: host)
        state = Mutex(generation)
        (generations, started) = AsyncStream.makeStream()
        started.yield(generation)
    }

    /// The generation new leases go to.
    var current: Generation { state.withLock { $0 } }

    /// Makes a generation of `client` the current one and returns the one it replaces (still running).
    func replace(with client: PostgresClient, host: DatabaseHost) -> Generation {
        let generation = Generation(client: client, host: host)
        let previous = state.withLock { current in
            defer { current = generation }
            return current
        }
        previous.markReplaced()
        started.yield(generation)
        return previous
    }
}
