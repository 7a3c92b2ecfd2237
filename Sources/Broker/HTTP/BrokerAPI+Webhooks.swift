import Foundation
import OpenAPIRuntime

// Placeholder until the webhook capability lands.
extension BrokerAPI {
    func putWebhook(_ input: Operations.PutWebhook.Input) async throws -> Operations.PutWebhook.Output {
        throw Problem.status(.notImplemented)
    }
    func getWebhook(_ input: Operations.GetWebhook.Input) async throws -> Operations.GetWebhook.Output {
        throw Problem.status(.notImplemented)
    }
    func deleteWebhook(_ input: Operations.DeleteWebhook.Input) async throws -> Operations.DeleteWebhook.Output {
        throw Problem.status(.notImplemented)
    }
    func listWebhookDeliveries(_ input: Operations.ListWebhookDeliveries.Input) async throws -> Operations.ListWebhookDeliveries.Output {
        throw Problem.status(.notImplemented)
    }
}
