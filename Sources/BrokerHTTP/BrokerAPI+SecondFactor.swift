import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

/// The second factor: the sign-in's second step, and enrolling, confirming and turning it off.
extension BrokerAPI {
    func completeSession(_ input: Operations.CompleteSession.Input) async throws -> Operations.CompleteSession.Output {
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let proof = try SecondFactorCode.from(code: body.code, recoveryCode: body.recoveryCode)
        let session = try await services.accounts.completeLogIn(
            challenge: body.challenge, proof, clientAddress: RequestScope.current.clientAddress, logger: logger)
        return .created(.init(body: .json(.init(session))))
    }

    func getSecondFactor(_ input: Operations.GetSecondFactor.Input) async throws -> Operations.GetSecondFactor.Output {
        let status = try await services.accounts.secondFactorStatus(of: try await caller(), logger: logger)
        return .ok(
            .init(
                body: .json(
                    .init(
                        enabled: status.enabled, enabledAt: status.enabledAt, pendingEnrolment: status.pendingEnrolment,
                        unusedRecoveryCodes: status.unusedRecoveryCodes, required: status.required))))
    }

    func startSecondFactorEnrolment(_ input: Operations.StartSecondFactorEnrolment.Input) async throws
        -> Operations.StartSecondFactorEnrolment.Output
    {
        let enrolment = try await services.accounts.startSecondFactorEnrolment(try await caller(), logger: logger)
        return .created(.init(body: .json(.init(secret: enrolment.secret, uri: enrolment.uri, qrCodeSvg: enrolment.qrCodeSVG))))
    }

    func confirmSecondFactor(_ input: Operations.ConfirmSecondFactor.Input) async throws -> Operations.ConfirmSecondFactor.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let current: SecondFactorCode? =
            body.currentCode == nil && body.currentRecoveryCode == nil
            ? nil
            : try SecondFactorCode.from(
                code: body.currentCode, recoveryCode: body.currentRecoveryCode, codeField: "currentCode", recoveryField: "currentRecoveryCode")
        let codes = try await services.accounts.confirmSecondFactor(
            principal, code: body.code, current: current, clientAddress: RequestScope.current.clientAddress, logger: logger)
        return .ok(.init(body: .json(.init(recoveryCodes: codes.map(\.text)))))
    }

    func deleteSecondFactor(_ input: Operations.DeleteSecondFactor.Input) async throws -> Operations.DeleteSecondFactor.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let proof = try SecondFactorCode.from(code: body.code, recoveryCode: body.recoveryCode)
        try await services.accounts.disableSecondFactor(principal, proof, clientAddress: RequestScope.current.clientAddress, logger: logger)
        return .noContent(.init())
    }
}
