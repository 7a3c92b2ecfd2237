import Foundation

/// Whether AutomatedSOS is on, with which policy and for what age: what must survive the app being closed.
public struct SOSSettings: Sendable, Hashable, Codable {
    public var enabled: Bool
    public var policy: SOSPolicy
    public var age: Int?

    public init(enabled: Bool = false, policy: SOSPolicy = .default, age: Int? = nil) {
        self.enabled = enabled
        self.policy = policy
        self.age = age
    }
}
