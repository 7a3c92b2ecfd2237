import Foundation
import OpenAPIRuntime

// Placeholder until the single-request capability lands.
extension BrokerAPI {
    func createSingleRequest(_ input: Operations.CreateSingleRequest.Input) async throws -> Operations.CreateSingleRequest.Output { throw Problem.status(.notImplemented) }
    func listSingleRequests(_ input: Operations.ListSingleRequests.Input) async throws -> Operations.ListSingleRequests.Output { throw Problem.status(.notImplemented) }
    func getSingleRequest(_ input: Operations.GetSingleRequest.Input) async throws -> Operations.GetSingleRequest.Output { throw Problem.status(.notImplemented) }
    func acceptSingleRequest(_ input: Operations.AcceptSingleRequest.Input) async throws -> Operations.AcceptSingleRequest.Output { throw Problem.status(.notImplemented) }
    func refuseSingleRequest(_ input: Operations.RefuseSingleRequest.Input) async throws -> Operations.RefuseSingleRequest.Output { throw Problem.status(.notImplemented) }
    func cancelSingleRequest(_ input: Operations.CancelSingleRequest.Input) async throws -> Operations.CancelSingleRequest.Output { throw Problem.status(.notImplemented) }
    func endSingleRequestSubscription(_ input: Operations.EndSingleRequestSubscription.Input) async throws -> Operations.EndSingleRequestSubscription.Output { throw Problem.status(.notImplemented) }
    func downloadSingleRequestData(_ input: Operations.DownloadSingleRequestData.Input) async throws -> Operations.DownloadSingleRequestData.Output { throw Problem.status(.notImplemented) }
    func getAccessLog(_ input: Operations.GetAccessLog.Input) async throws -> Operations.GetAccessLog.Output { throw Problem.status(.notImplemented) }
    func listBlocks(_ input: Operations.ListBlocks.Input) async throws -> Operations.ListBlocks.Output { throw Problem.status(.notImplemented) }
    func blockThirdParty(_ input: Operations.BlockThirdParty.Input) async throws -> Operations.BlockThirdParty.Output { throw Problem.status(.notImplemented) }
    func unblockThirdParty(_ input: Operations.UnblockThirdParty.Input) async throws -> Operations.UnblockThirdParty.Output { throw Problem.status(.notImplemented) }
}
