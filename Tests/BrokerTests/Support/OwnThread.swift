import Foundation

/// Runs blocking socket calls on a thread of their own: on Swift's cooperative pool (two threads on a
/// two-core machine) a blocked read starves the in-process server it is waiting for, and the test hangs.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
