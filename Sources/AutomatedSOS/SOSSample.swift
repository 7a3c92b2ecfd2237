import Foundation

/// One reading from a sensor of the person wearing the device.
public struct SOSSample: Sendable, Hashable, Codable {
    public var type: SOSSampleType
    public var value: Double
    public var at: Date

    public init(type: SOSSampleType, value: Double, at: Date) {
        self.type = type
        self.value = value
        self.at = at
    }
}
