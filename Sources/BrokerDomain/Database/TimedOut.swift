import PostgresStatements

struct TimedOut: Error {}

/// Runs `work`, giving up after `seconds`.
func withTimeout<T: Sendable>(seconds: Double, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await work() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimedOut()
        }
        defer { group.cancelAll() }
        guard let result = try await group.next() else { throw TimedOut() }
        return result
    }
}

/// Runs `work` in a task of its own and returns its outcome, or throws `TimedOut` after `seconds` without
/// waiting for it (as `withTimeout` does): for work that may never end, such as a query PostgresNIO strands
/// on a connection the server killed. Abandoned work runs on, so it must clean up after itself.
func abandoning<T: Sendable>(after seconds: Double, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
    let first = FirstOutcome<T>()
    return try await withCheckedThrowingContinuation { continuation in
        first.install(continuation)
        Task {
            do {
                first.resume(with: .success(try await work()))
            } catch {
                first.resume(with: .failure(error))
            }
        }
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            first.resume(with: .failure(TimedOut()))
        }
    }
}
