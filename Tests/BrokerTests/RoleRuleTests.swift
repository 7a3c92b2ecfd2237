import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerDomain
@testable import BrokerServer

/// Roles are the services' rule, not the API's: called directly, as the console and any new front would
/// call them, each service refuses a role it does not serve. These are the checks that lived only in the
/// API's handlers (or in `BudgetedOperations`) until the services took them over; `AuthorizationMatrixTests`
/// checks the same through HTTP.
@Suite("Role rules in the services")
struct RoleRuleTests {
    static let person = Principal(accountID: UUID(), role: .user, credential: .session(tokenHash: Data()))
    static let company = Principal(accountID: UUID(), role: .thirdParty, credential: .session(tokenHash: Data()))
    static let auditor = Principal(accountID: UUID(), role: .auditor, credential: .session(tokenHash: Data()))

    /// The services as the server builds them (with a signing key, so checkpoints are served), on a fresh
    /// database with their pool running.
    static func withServices(_ body: @escaping @Sendable (Services) async throws -> Void) async throws {
        try await TestDatabase.withMigratedDatabase { url in
            var configuration = BrokerConfiguration(databaseURL: url.text, publicURL: "http://127.0.0.1:8080")
            configuration.auditSigningKey = AuditSigningKey.generate()
            let services = try await Services.make(configuration: configuration, logger: TestDatabase.logger, noise: NoNoise())
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await services.client.run() }
                defer { group.cancelAll() }
                try await body(services)
            }
        }
    }

    /// `operation` refuses each of `refused` with `WrongRole` and lets `allowed` past the role check (it may
    /// still fail for another reason, such as a request that does not exist).
    static func expectOnly(
        _ allowed: Principal, refusing refused: [Principal], _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ operation: (Principal) async throws -> Void
    ) async {
        for principal in refused {
            await #expect(throws: WrongRole.self, "\(what) as \(principal.role)", sourceLocation: sourceLocation) {
                try await operation(principal)
            }
        }
        do {
            try await operation(allowed)
        } catch let error as WrongRole {
            Issue.record("\(what) refused its own role \(allowed.role): \(error.detail)", sourceLocation: sourceLocation)
        } catch {}
    }

    @Test("the audit log, its verification and its checkpoints are for auditors only")
    func auditTrail() async throws {
        try await Self.withServices { services in
            let logger = TestDatabase.logger
            let others = [Self.person, Self.company]
            await Self.expectOnly(Self.auditor, refusing: others, "reading the audit log") {
                _ = try await services.auditTrail.events(.init(from: nil, to: nil, action: nil), page: PageRequest(), for: $0, logger: logger)
            }
            await Self.expectOnly(Self.auditor, refusing: others, "verifying the audit log") {
                _ = try await services.auditTrail.verify(for: $0, logger: logger)
            }
            await Self.expectOnly(Self.auditor, refusing: others, "listing checkpoints") {
                _ = try await services.auditCheckpoints.list(page: PageRequest(), for: $0, logger: logger)
            }
            await Self.expectOnly(Self.auditor, refusing: others, "the latest checkpoint") {
                _ = try await services.auditCheckpoints.latest(for: $0, logger: logger)
            }
            await Self.expectOnly(Self.auditor, refusing: others, "the signing key") {
                _ = try services.auditCheckpoints.signingKey(for: $0)
            }
        }
    }

    @Test("a company reads its own group requests, an auditor everyone's, and neither the other's view")
    func groupRequests() async throws {
        try await Self.withServices { services in
            let logger = TestDatabase.logger
            // Before, the service let an auditor through its company list (all requests) and a company through
            // the auditors' one (its own): only the handlers' checks kept the two views apart.
            await Self.expectOnly(Self.company, refusing: [Self.person, Self.auditor], "a company's group requests") {
                _ = try await services.groupRequests.list(for: $0, status: nil, page: PageRequest(), logger: logger)
            }
            await Self.expectOnly(Self.auditor, refusing: [Self.person, Self.company], "every company's group requests") {
                _ = try await services.groupRequests.auditList(for: $0, status: nil, page: PageRequest(), logger: logger)
            }
            await Self.expectOnly(Self.company, refusing: [Self.person, Self.auditor], "one group request") {
                _ = try await services.groupRequests.request(id: UUID(), for: $0, logger: logger)
            }
        }
    }

    @Test("only people import Apple Health exports and read their imports")
    func imports() async throws {
        try await Self.withServices { services in
            let logger = TestDatabase.logger
            for principal in [Self.company, Self.auditor] {
                await #expect(throws: SampleError.notAUser, "starting an import as \(principal.role)") {
                    try await services.imports.refuseIfImporting(principal)
                }
                await #expect(throws: SampleError.notAUser, "reading an import as \(principal.role)") {
                    _ = try await services.imports.job(id: UUID(), for: principal, logger: logger)
                }
            }
            try await services.imports.refuseIfImporting(Self.person)
            await #expect(throws: ImportJobError.notFound) { _ = try await services.imports.job(id: UUID(), for: Self.person, logger: logger) }
        }
    }

    @Test("a person lists their own consent receipts; auditors read no request's receipts, Consent or receipt")
    func consentReceipts() async throws {
        try await Self.withServices { services in
            let logger = TestDatabase.logger
            await Self.expectOnly(Self.person, refusing: [Self.company, Self.auditor], "listing one's own consent receipts") {
                _ = try await services.consentReceipts.list(for: $0, page: PageRequest(), logger: logger)
            }
            let receipts = services.consentReceipts
            // Auditors are refused by role; a request's two parties get past it, to a request that does not exist.
            for principal in [Self.auditor, Self.person, Self.company] {
                let expected: any Error = principal.role == .auditor ? WrongRole("") : SingleRequestError.notFound
                func isExpected(_ error: any Error) -> Bool { type(of: error) == type(of: expected) }
                do {
                    _ = try await receipts.receipts(ofRequest: UUID(), for: principal, logger: logger)
                    Issue.record("a request's receipts as \(principal.role) did not throw")
                } catch { #expect(isExpected(error), "a request's receipts as \(principal.role): \(error)") }
                do {
                    _ = try await receipts.record(ofRequest: UUID(), for: principal, logger: logger)
                    Issue.record("a request's Consent as \(principal.role) did not throw")
                } catch { #expect(isExpected(error), "a request's Consent as \(principal.role): \(error)") }
                do {
                    _ = try await receipts.receipt(id: UUID(), for: principal, logger: logger)
                    Issue.record("one receipt as \(principal.role) did not throw")
                } catch { #expect(isExpected(error), "one receipt as \(principal.role): \(error)") }
            }
        }
    }
}
