import Foundation

/// The `data` of a `single_request.accepted` webhook: what the person granted, so the sender need not
/// read the request back to learn which types and window it may download.
struct GrantAnnouncement: Encodable, Sendable {
    struct Window: Encodable, Sendable {
        var from: Date?
        var to: Date?
    }

    struct Grant: Encodable, Sendable {
        var id: String
        var grantedAt: Date
        var types: [String]
        var window: Window
        /// Nil: no subscription, a one-off release of what had arrived at acceptance.
        var subscriptionDays: Int?
        var narrowed: Bool
    }

    var requestId: String
    var grant: Grant
    /// The grant's signed consent receipt (a compact JWS); absent when the server signs none.
    var receipt: String?

    init(_ request: SingleRequest, grant: ConsentGrant, receipt: String? = nil) {
        requestId = request.id.uuidString.lowercased()
        self.receipt = receipt
        self.grant = Grant(
            id: grant.id.uuidString.lowercased(), grantedAt: grant.grantedAt, types: grant.terms.types.map(\.rawValue),
            window: Window(from: grant.terms.windowFrom, to: grant.terms.windowTo), subscriptionDays: grant.terms.subscriptionDays,
            narrowed: grant.narrowed)
    }
}

// A nil window end or subscription is encoded as JSON null, so every key is always there.
extension GrantAnnouncement.Grant {
    enum CodingKeys: String, CodingKey { case id, grantedAt, types, window, subscriptionDays, narrowed }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(grantedAt, forKey: .grantedAt)
        try container.encode(types, forKey: .types)
        try container.encode(window, forKey: .window)
        try container.encode(subscriptionDays, forKey: .subscriptionDays)
        try container.encode(narrowed, forKey: .narrowed)
    }
}

extension GrantAnnouncement.Window {
    enum CodingKeys: String, CodingKey { case from, to }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(from, forKey: .from)
        try container.encode(to, forKey: .to)
    }
}
