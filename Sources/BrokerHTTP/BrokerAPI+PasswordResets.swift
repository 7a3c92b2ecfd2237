import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func requestPasswordReset(_ input: Operations.RequestPasswordReset.Input) async throws -> Operations.RequestPasswordReset.Output {
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        // Known, unknown or not activated, the same empty 202: only the owner's mailbox learns which.
        try await services.accounts.requestPasswordReset(
            email: body.email, clientAddress: RequestScope.current.clientAddress, logger: logger)
        return .accepted(.init())
    }

    func resetPassword(_ input: Operations.ResetPassword.Input) async throws -> Operations.ResetPassword.Output {
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        try await services.accounts.resetPassword(
            token: input.path.token, password: body.password, clientAddress: RequestScope.current.clientAddress, logger: logger)
        return .noContent(.init())
    }
}
