import Foundation
import Logging
import ServiceLifecycle

/// Signs a checkpoint of the audit log at start and then every `interval` (`AUDIT_CHECKPOINT_INTERVAL`,
/// default 300 s) when the log has grown. Each step rehashes only the events since the last checkpoint.
package struct AuditCheckpointPublishing: Service {
    package init(checkpoints: AuditCheckpoints, interval: Duration?, logger: Logger) {
        self.checkpoints = checkpoints
        self.interval = interval
        self.logger = logger
    }

    let checkpoints: AuditCheckpoints
    /// Nil, or no signing key: the loop is off.
    let interval: Duration?
    let logger: Logger

    package func run() async throws {
        guard checkpoints.key != nil else {
            logger.warning("audit checkpoints are off: set AUDIT_SIGNING_KEY_FILE so auditors can detect a truncated or rewritten audit log")
            return try await gracefulShutdown()
        }
        guard let interval else { return try await gracefulShutdown() }
        let checkpoints = checkpoints
        let logger = logger
        await repeatUntilShutdown(every: interval, logger: logger, failure: "signing an audit checkpoint failed; will retry") {
            try await checkpoints.publish(logger: logger)
            return false
        }
    }
}
