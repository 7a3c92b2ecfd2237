import AutomatedSOS
import Foundation

/// A sample the server refused (a 422 naming it), set aside so that it no longer blocks the ones after it.
public struct RejectedSample: Sendable, Hashable {
    public var sample: SOSSample
    /// The server's reasons, each led by the field it is about, e.g. `at is more than 5 minutes in the future`.
    public var messages: [String]
    /// When it was set aside (the device's clock).
    public var rejectedAt: Date

    public init(sample: SOSSample, messages: [String], rejectedAt: Date = Date()) {
        self.sample = sample
        self.messages = messages
        self.rejectedAt = rejectedAt
    }
}
