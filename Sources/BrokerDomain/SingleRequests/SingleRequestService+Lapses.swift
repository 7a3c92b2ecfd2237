import Foundation
import Logging
import PostgresNIO

extension SingleRequestService {
    /// Queues the `single_request.expired` webhook of requests that lapsed while their sender was shown them
    /// as pending, a batch at a time. The lapse itself needs no job (every read computes it from time); this
    /// only announces it, the same way whether the person never answered, never existed or refused.
    @discardableResult
    package func announceLapses(limit: Int = 500, logger: Logger) async throws -> Int {
        try await client.withTransaction(logger: logger) { connection in
            let lapsed = try await SingleRequestStore.claimUnannouncedLapses(limit: limit, on: connection, logger: logger)
            for request in lapsed {
                try await WebhookOutboxStore.enqueue(
                    .singleRequestExpired, to: request.thirdParty.id, requestID: request.id, data: [:], on: connection, logger: logger)
                try await mailLapse(request, on: connection, logger: logger)
            }
            return lapsed.count
        }
    }
}
