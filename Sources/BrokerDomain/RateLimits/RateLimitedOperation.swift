/// The expensive operations, as the per-account budgets they draw on (one `RATE_LIMIT_*` setting each).
package enum RateLimitedOperation: String, Sendable, Hashable, CaseIterable {
    /// `POST /v1/me/samples`.
    case uploads
    /// `POST /v1/me/imports/apple-health`.
    case imports
    /// Single-request data, group results, the personal export and the audit log as CSV.
    case downloads
    /// `POST /v1/group-requests` (each one evaluates a cohort over the whole population).
    case groupRequests
    /// `GET /v1/me/statistics` (each one composes the person's buckets and their peers' published cells).
    case statistics

    /// The roles that can perform the operation; only they are charged. A caller of another role is left
    /// to the service's own role check, so it gets its 403, never a 429 for something it may not do.
    /// Every role has some download (companies their data and results, people their export, auditors the
    /// log), so download endpoints name their own roles (`BudgetedOperations.admit(_:to:roles:logger:)`).
    package var chargedRoles: Set<Role> {
        switch self {
        case .uploads, .imports, .statistics: [.user]
        case .groupRequests: [.thirdParty]
        case .downloads: Set(Role.allCases)
        }
    }

    /// What the problem detail calls it.
    package var noun: String {
        switch self {
        case .uploads: "sample uploads"
        case .imports: "Apple Health imports"
        case .downloads: "downloads"
        case .groupRequests: "new group requests"
        case .statistics: "statistics requests"
        }
    }
}
