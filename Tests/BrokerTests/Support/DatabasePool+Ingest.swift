import BrokerTestSupport
import Foundation

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

extension DatabasePool {
    /// Stores samples through the real ingest, in a transaction of their own, as an upload does: for fixtures
    /// that need a person's data without going through HTTP.
    @discardableResult
    func ingest(_ samples: [Sample], for userID: UUID) async throws -> SampleStore.IngestResult {
        try await withTransaction(logger: TestDatabase.logger) {
            try await SampleStore.ingest(samples, for: userID, on: $0, logger: TestDatabase.logger)
        }
    }
}
