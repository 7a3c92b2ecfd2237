import Foundation
import Logging
import PostgresNIO

/// A person's sharing preferences: which sample types they share with companies at all
/// (`SharingPreferences`). Companies are never told of them: a request for an unshared type is delivered
/// and answered as any other, the person just cannot grant that type until they share it again.
package struct SharingService: Sendable {
    package let client: DatabasePool
    package let pseudonymizer: Pseudonymizer

    package init(client: DatabasePool, pseudonymizer: Pseudonymizer) {
        self.client = client
        self.pseudonymizer = pseudonymizer
    }

    package func preferences(of principal: Principal, logger: Logger) async throws -> SharingPreferences {
        guard principal.role == .user else { throw WrongRole("Only people choose what they share.") }
        return try await client.withConnection { connection in
            try await SharingPreferenceStore.preferences(of: principal.accountID, on: connection, logger: logger)
        }
    }

    /// Applies `changes` (a type not named keeps its setting) and answers every type's setting. All or
    /// nothing: an unknown type, or a type named twice, is a violation at its index and nothing changes.
    /// A change is audited (`sharing.changed`) by the types it stopped or resumed sharing, nothing else;
    /// setting what was already set records nothing.
    package func update(_ changes: [SharingPreferences.Change], by principal: Principal, logger: Logger) async throws -> SharingPreferences {
        guard principal.role == .user else { throw WrongRole("Only people choose what they share.") }
        var violations: [SharingError.Violation] = []
        var wanted: [SampleType: Bool] = [:]
        for (index, change) in changes.enumerated() {
            switch change.type {
            case .unreadable(let why):
                violations.append(.init(index: index, message: why))
            case .value(let type):
                if wanted.updateValue(change.shared, forKey: type) != nil {
                    violations.append(.init(index: index, message: "\(type.rawValue) is listed more than once"))
                }
            }
        }
        guard violations.isEmpty else { throw SharingError.invalid(violations) }
        let userID = principal.accountID
        return try await client.withTransaction(logger: logger) { connection in
            try await SharingPreferenceStore.lock(userID: userID, on: connection, logger: logger)
            let before = try await SharingPreferenceStore.preferences(of: userID, on: connection, logger: logger)
            let stopped = Set(wanted.filter { !$0.value && before.isShared($0.key) }.keys)
            let resumed = Set(wanted.filter { $0.value && !before.isShared($0.key) }.keys)
            guard !stopped.isEmpty || !resumed.isEmpty else { return before }
            try await SharingPreferenceStore.set(unshared: stopped, shared: resumed, userID: userID, on: connection, logger: logger)
            // A download that read the newly unshared types ahead reads its chunk again before sending it.
            if !stopped.isEmpty { try await SampleRevisionStore.advanceDataRevision(of: userID, on: connection, logger: logger) }
            let subject = try await pseudonymizer.pseudonym(for: userID, on: connection, logger: logger)
            try await AuditLog.append(
                AuditEvent(
                    actorID: subject, actorRole: Role.user.rawValue, action: AuditAction.sharingChanged, subject: subject,
                    details: ["unshared": .string(Self.names(stopped)), "shared": .string(Self.names(resumed))]),
                on: connection, logger: logger)
            return try await SharingPreferenceStore.preferences(of: userID, on: connection, logger: logger)
        }
    }

    /// The types' names in the catalogue's order, comma-separated.
    private static func names(_ types: Set<SampleType>) -> String {
        SampleType.allCases.filter(types.contains).map(\.rawValue).joined(separator: ",")
    }
}
