import Foundation

/// One entry for the audit log; `seq`, `at` and the hashes are assigned by the database.
public struct AuditEvent: Sendable {
    public var actorID: String?
    public var actorRole: String
    public var action: String
    public var requestID: UUID?
    /// Always a pseudonym (see `Pseudonymizer`), never an email, name, fiscal code or raw id of a person.
    public var subject: String?
    public var details: [String: AuditValue]

    public init(
        actorID: String?, actorRole: String, action: String, requestID: UUID? = nil, subject: String? = nil,
        details: [String: AuditValue] = [:]
    ) {
        self.actorID = actorID
        self.actorRole = actorRole
        self.action = action
        self.requestID = requestID
        self.subject = subject
        self.details = details
    }
}

/// A detail value; deliberately limited to plain scalars so no structure can smuggle personal data in.
public enum AuditValue: Sendable, Encodable, Equatable {
    case string(String)
    case int(Int)
    case bool(Bool)

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        }
    }
}

/// Actions recorded so far; later capabilities add theirs.
public enum AuditAction {
    public static let accountCreated = "account.created"
    public static let accountActivated = "account.activated"
    public static let accountErased = "account.erased"
    /// An account not activated in time, deleted so its email and fiscal code or VAT number are free again.
    public static let accountExpired = "account.expired"
    public static let passwordChanged = "account.password_changed"
    public static let auditorAdded = "auditor.added"
    public static let apiKeyCreated = "api_key.created"
    public static let apiKeyRevoked = "api_key.revoked"
    public static let singleRequestCreated = "single_request.created"
    public static let singleRequestAccepted = "single_request.accepted"
    public static let singleRequestRefused = "single_request.refused"
    public static let singleRequestCancelled = "single_request.cancelled"
    public static let subscriptionEnded = "subscription.ended"
    public static let subscriptionExpired = "subscription.expired"
    /// A download of a single request's data; `details.rows` is the number of samples released.
    public static let singleRequestDataReleased = "single_request.data_released"
    public static let groupRequestAccepted = "group_request.accepted"
    public static let groupRequestRefused = "group_request.refused"
    /// A release of a group request's anonymised results (at acceptance, and when a subscription's figures change).
    public static let groupResultsReleased = "group_request.results_released"
    public static let thirdPartyBlocked = "block.added"
    public static let thirdPartyUnblocked = "block.removed"
}
