import Foundation

/// One entry for the audit log; `seq`, `at` and the hashes are assigned by the database.
package struct AuditEvent: Sendable {
    package var actorID: String?
    package var actorRole: String
    package var action: String
    package var requestID: UUID?
    /// Always a pseudonym (see `Pseudonymizer`), never an email, name, fiscal code or raw id of a person.
    package var subject: String?
    package var details: [String: AuditValue]

    package init(
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
