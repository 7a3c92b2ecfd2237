import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func registerUser(_ input: Operations.RegisterUser.Input) async throws -> Operations.RegisterUser.Output {
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        // New or taken, the same answer: the holder of a taken email or fiscal code is mailed instead.
        _ = try await services.accounts.register(
            AccountService.UserRegistration(
                email: body.email, password: body.password, fiscalCode: body.fiscalCode, fullName: body.fullName,
                birthDate: body.birthDate, sex: body.sex.rawValue, language: body.language.map(Language.init) ?? RequestScope.current.language),
            logger: logger)
        return .accepted(.init(body: .json(Self.registrationReceipt(email: body.email))))
    }

    func registerThirdParty(_ input: Operations.RegisterThirdParty.Input) async throws
        -> Operations.RegisterThirdParty.Output
    {
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        _ = try await services.accounts.register(
            AccountService.ThirdPartyRegistration(
                email: body.email, password: body.password, vatNumber: body.vatNumber, companyName: body.companyName,
                description: body.description, language: body.language.map(Language.init) ?? RequestScope.current.language),
            logger: logger)
        return .accepted(.init(body: .json(Self.registrationReceipt(email: body.email))))
    }

    /// The one answer to every well-formed registration: only what the caller sent (the email, as stored).
    static func registrationReceipt(email: String) -> Components.Schemas.RegistrationReceipt {
        .init(
            email: EmailAddress.asStored(email),
            message: "If this registration can be completed, an activation mail is on its way to this address.")
    }

    func activateAccount(_ input: Operations.ActivateAccount.Input) async throws -> Operations.ActivateAccount.Output {
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let account = try await services.accounts.activate(token: body.token, password: body.password, logger: logger)
        return .ok(.init(body: .json(try .init(account))))
    }

    func resendActivationMail(_ input: Operations.ResendActivationMail.Input) async throws
        -> Operations.ResendActivationMail.Output
    {
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        try await services.accounts.resendActivation(email: body.email, logger: logger)
        return .accepted(.init())
    }

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        let account = try await services.accounts.account(of: try await caller(), logger: logger)
        return .ok(.init(body: .json(try .init(account))))
    }

    func updateMe(_ input: Operations.UpdateMe.Input) async throws -> Operations.UpdateMe.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let immutable: [(String, OpenAPIValueContainer?)] = [
            ("email", body.email), ("fiscalCode", body.fiscalCode), ("vatNumber", body.vatNumber),
            ("birthDate", body.birthDate), ("sex", body.sex),
        ]
        let update = AccountService.ProfileUpdate(
            fullName: body.fullName, timeZone: body.timeZone, companyName: body.companyName, description: body.description,
            currentPassword: body.currentPassword, newPassword: body.newPassword, keepAPIKeys: body.keepApiKeys,
            immutableFieldsPresent: immutable.filter { $0.1 != nil }.map(\.0), language: body.language.map(Language.init))
        let updated = try await services.accounts.update(principal, with: update, clientAddress: RequestScope.current.clientAddress, logger: logger)
        var account = try Components.Schemas.Account(updated.account)
        account.revokedApiKeys = updated.revokedAPIKeys
        return .ok(.init(body: .json(account)))
    }

    func deleteMe(_ input: Operations.DeleteMe.Input) async throws -> Operations.DeleteMe.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        try await services.accounts.erase(principal, password: body.password, clientAddress: RequestScope.current.clientAddress, logger: logger)
        return .noContent(.init())
    }
}
