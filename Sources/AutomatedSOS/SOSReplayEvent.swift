import Foundation
import Synchronization

/// One line of `d4h sos` output: an alert, or an action of the responder.
public struct SOSReplayEvent: Sendable, Hashable, Codable {
    /// `alert`, or a responder action: `prompted`, `dismissed`, `confirmed`, `countdown_ended`, `dialed`, `dial_failed`.
    public var event: String
    public var rule: String
    public var type: SOSSampleType?
    public var comparison: SOSComparison?
    public var value: Double?
    public var threshold: Double?
    /// For an alert, the reading's time; for an action, the (replay) clock's time.
    public var at: Date
    public var deadline: Date?
    public var detail: String?

    /// The line as JSON, keys sorted, times as RFC 3339.
    public func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(SOSTrace.format(date))
        }
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}
