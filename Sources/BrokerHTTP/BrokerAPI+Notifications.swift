import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func getNotifications(_ input: Operations.GetNotifications.Input) async throws -> Operations.GetNotifications.Output {
        let principal = try await caller()
        return .ok(.init(body: .json(try await notificationPreferences(of: principal))))
    }

    func setNotifications(_ input: Operations.SetNotifications.Input) async throws -> Operations.SetNotifications.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let allowed = MailKind.notifications(for: principal.role)
        var changes: [MailKind: Bool] = [:]
        var errors: [FieldError] = []
        for (index, setting) in body.notifications.enumerated() {
            guard let kind = MailKind(rawValue: setting.kind), allowed.contains(kind) else {
                errors.append(FieldError(field: "notifications[\(index)].kind", message: "is not a notification this account receives"))
                continue
            }
            changes[kind] = setting.enabled
        }
        guard errors.isEmpty else { throw Problem.validationFailed(errors) }
        try await services.mailOutbox.setPreferences(accountID: principal.accountID, role: principal.role, changes, logger: logger)
        return .ok(.init(body: .json(try await notificationPreferences(of: principal))))
    }

    private func notificationPreferences(of principal: Principal) async throws -> Components.Schemas.NotificationPreferences {
        let preferences = try await services.mailOutbox.preferences(accountID: principal.accountID, role: principal.role, logger: logger)
        return .init(
            notifications: try preferences.map {
                guard let kind = Components.Schemas.NotificationSetting.KindPayload(rawValue: $0.kind.rawValue) else {
                    throw StoredValueMismatch(column: "notification kind", value: $0.kind.rawValue)
                }
                return .init(kind: kind, enabled: $0.on)
            })
    }
}
