import Foundation

/// A detail value; deliberately limited to plain scalars so no structure can smuggle personal data in.
package enum AuditValue: Sendable, Encodable, Equatable {
    case string(String)
    case int(Int)
    case bool(Bool)

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        }
    }
}
