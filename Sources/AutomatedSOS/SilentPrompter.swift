import Foundation
import Synchronization

/// Nobody is there to answer: waits until the countdown cancels it.
struct SilentPrompter: SOSPrompter {
    func ask(_ alert: SOSAlert, deadline: Date) async throws -> SOSAnswer {
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}
