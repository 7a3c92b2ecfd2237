import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func registerUser(_ input: Operations.RegisterUser.Input) async throws -> Operations.RegisterUser.Output {
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let account = try await accounts.register(
            AccountService.UserRegistration(
                email: body.email, password: body.password, fiscalCode: body.fiscalCode, fullName: body.fullName,
                birthDate: body.birthDate, sex: body.sex.rawValue),
            logger: logger)
        return .created(.init(body: .json(.init(account))))
    }

    func registerThirdParty(_ input: Operations.RegisterThirdParty.Input) async throws
        -> Operations.RegisterThirdParty.Output
    {
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let account = try await accounts.register(
            AccountService.ThirdPartyRegistration(
                email: body.email, password: body.password, vatNumber: body.vatNumber, companyName: body.companyName,
                description: body.description),
            logger: logger)
        return .created(.init(body: .json(.init(account))))
    }

    func activateAccount(_ input: Operations.ActivateAccount.Input) async throws -> Operations.ActivateAccount.Output {
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let account = try await accounts.activate(token: body.token, password: body.password, logger: logger)
        return .ok(.init(body: .json(.init(account))))
    }

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        let account = try await accounts.account(of: try await caller(), logger: logger)
        return .ok(.init(body: .json(.init(account))))
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
            currentPassword: body.currentPassword, newPassword: body.newPassword,
            immutableFieldsPresent: immutable.filter { $0.1 != nil }.map(\.0))
        let account = try await accounts.update(principal, with: update, logger: logger)
        return .ok(.init(body: .json(.init(account))))
    }

    func deleteMe(_ input: Operations.DeleteMe.Input) async throws -> Operations.DeleteMe.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        try await accounts.erase(principal, password: body.password, logger: logger)
        return .noContent(.init())
    }
}
