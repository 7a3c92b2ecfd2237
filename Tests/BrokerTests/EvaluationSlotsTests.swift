import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Issue 14: one company's burst of group requests must not queue another company's request behind it,
/// and a wait for an evaluation slot is bounded.
@Suite("Evaluation slots")
struct EvaluationSlotsTests {
    /// The order in which waiters got their slot.
    final class Order: Sendable {
        let names = Mutex<[String]>([])
        func append(_ name: String) { names.withLock { $0.append(name) } }
        var all: [String] { names.withLock { $0 } }
    }

    /// Starts a task that waits for a slot for `company` and records the order it got one; returns once
    /// the task is queued, so the queue's order is the order of these calls.
    static func queue(
        _ slots: EvaluationSlots, company: UUID, name: String, order: Order
    ) async -> Task<Void, any Error> {
        let before = slots.waiting
        let task = Task {
            try await slots.withSlot(for: company) {
                order.append(name)
            }
        }
        while slots.waiting == before { await Task.yield() }
        return task
    }

    @Test("a free slot goes to the company served longest ago, not to the next of one company's many waiters")
    func companiesTakeTurns() async throws {
        let slots = EvaluationSlots(slots: 1, timeout: .seconds(60))
        let busy = UUID()
        let other = UUID()
        let order = Order()
        let (release, releaseSignal) = AsyncStream<Void>.makeStream()
        let (held, heldSignal) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await slots.withSlot(for: busy) {
                heldSignal.yield()
                for await _ in release { break }
            }
        }
        for await _ in held { break }
        var waiters: [Task<Void, any Error>] = []
        for index in 1...3 { waiters.append(await Self.queue(slots, company: busy, name: "busy \(index)", order: order)) }
        waiters.append(await Self.queue(slots, company: other, name: "other", order: order))
        releaseSignal.yield()
        try await holder.value
        for waiter in waiters { try await waiter.value }
        // The naive FIFO would serve all three of the busy company's first.
        #expect(order.all == ["busy 1", "other", "busy 2", "busy 3"])
    }

    @Test("a wait longer than the timeout ends with EvaluationsBusy, and the slot is not lost")
    func waitIsBounded() async throws {
        let slots = EvaluationSlots(slots: 1, timeout: .milliseconds(200))
        let (release, releaseSignal) = AsyncStream<Void>.makeStream()
        let (held, heldSignal) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await slots.withSlot(for: UUID()) {
                heldSignal.yield()
                for await _ in release { break }
            }
        }
        for await _ in held { break }
        await #expect(throws: EvaluationsBusy.self) { try await slots.withSlot(for: UUID()) {} }
        #expect(slots.waiting == 0)
        releaseSignal.yield()
        try await holder.value
        try await slots.withSlot(for: UUID()) {}
    }
}
