import BrokerDomain
import BrokerTestSupport
import Logging

extension AccountService {
    /// For tools that register accounts of their own (the demo seed, benchmarks): the activation token of
    /// the newest mail to `email`, taken out of the outbox so that it is never sent.
    package func takeActivationToken(for email: String, logger: Logger) async throws -> String? {
        try await outbox.withdraw(to: email, logger: logger).last.flatMap { CapturingMailer.activationToken(in: $0.body) }
    }
}
