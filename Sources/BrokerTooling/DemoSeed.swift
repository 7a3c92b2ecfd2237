import BrokerDomain
import BrokerTestSupport
import Foundation
import Logging
import PostgresNIO

/// The demo accounts of `Seeds/demo-accounts.json`, created active through the real registration path.
package struct DemoSeed: Decodable, Sendable {
    package struct User: Decodable, Sendable {
        package var email, password, fiscalCode, fullName, birthDate, sex: String
    }
    package struct ThirdParty: Decodable, Sendable {
        package var email, password, vatNumber, companyName: String
        package var description: String?
    }
    package struct Auditor: Decodable, Sendable {
        package var email, password: String
    }

    package var users: [User]
    package var thirdParties: [ThirdParty]
    package var auditors: [Auditor]

    package static func load(from file: URL) throws -> DemoSeed {
        try JSONDecoder().decode(DemoSeed.self, from: Data(contentsOf: file))
    }

    /// One line per account: what was done and the credentials to log in with.
    package struct Outcome: Sendable {
        package var role: Role
        package var email: String
        package var password: String
        package var created: Bool
    }

    /// Registers and activates every account that does not exist yet; existing ones are left as they are.
    package func apply(client: DatabasePool, logger: Logger) async throws -> [Outcome] {
        let service = try await AccountService.standalone(client: client, publicURL: "http://127.0.0.1:8080")
        var outcomes: [Outcome] = []

        func seed(role: Role, email: String, password: String, register: () async throws -> Account?) async throws {
            do {
                // Nil: the email (or the fiscal code or VAT number) is already registered, by an earlier seed.
                guard let account = try await register() else {
                    outcomes.append(Outcome(role: role, email: email, password: password, created: false))
                    return
                }
                // The seed's accounts are its own: their activation mails are taken out of the outbox, not sent.
                guard let token = try await service.takeActivationToken(for: email, logger: logger) else { throw AccountStoreError.noRow }
                _ = try await service.activate(token: token, password: role == .auditor ? password : nil, logger: logger)
                if role == .user { try await storeDemoSamples(forUser: account.id, client: client, logger: logger) }
                outcomes.append(Outcome(role: role, email: email, password: password, created: true))
            } catch AccountError.emailTaken {
                outcomes.append(Outcome(role: role, email: email, password: password, created: false))
            }
        }

        for user in users {
            try await seed(role: .user, email: user.email, password: user.password) {
                try await service.register(
                    AccountService.UserRegistration(
                        email: user.email, password: user.password, fiscalCode: user.fiscalCode, fullName: user.fullName,
                        birthDate: user.birthDate, sex: user.sex), logger: logger)
            }
        }
        for company in thirdParties {
            try await seed(role: .thirdParty, email: company.email, password: company.password) {
                try await service.register(
                    AccountService.ThirdPartyRegistration(
                        email: company.email, password: company.password, vatNumber: company.vatNumber,
                        companyName: company.companyName, description: company.description), logger: logger)
            }
        }
        for auditor in auditors {
            try await seed(role: .auditor, email: auditor.email, password: auditor.password) {
                try await service.addAuditor(email: auditor.email, logger: logger)
            }
        }
        return outcomes
    }
}
