import Hummingbird
import Logging
import ServiceLifecycle
import Testing

/// The harness once waited for ever for the port of a server that had already stopped (see `LiveServer`);
/// a test then never ended, nor did the run. The time limits turn a regression into a failure that names
/// the test rather than a silent stall.
@Suite("Test servers")
struct LiveServerTests {
    static let logger: Logger = {
        var logger = Logger(label: "live-server-tests")
        logger.logLevel = .critical
        return logger
    }()

    struct StartFailed: Error {}

    @Test("a server that fails before it listens ends the test with that error", .timeLimit(.minutes(1)))
    func failsBeforeListening() async throws {
        var app = Application(router: Router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: Self.logger)
        app.beforeServerStarts { throw StartFailed() }
        await #expect(throws: StartFailed.self) {
            try await LiveServer.run(app) { _ in Issue.record("the test's body ran without a server") }
        }
    }

    @Test("a server that cannot bind its port ends the test with the reason", .timeLimit(.minutes(1)))
    func portTaken() async throws {
        let first = Application(router: Router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: Self.logger)
        try await LiveServer.run(first) { port in
            let second = Application(
                router: Router(), configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: Self.logger)
            await #expect(throws: (any Error).self) {
                try await LiveServer.run(second) { _ in Issue.record("the second server listened on a taken port") }
            }
        }
    }

    /// A background service that keeps working after the graceful shutdown began, until it is cancelled.
    struct Stubborn: Service {
        func run() async throws {
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(50)) }
        }
    }

    @Test("a server that does not stop within its bound ends the test with ServerDidNotStop", .timeLimit(.minutes(1)))
    func stopIsBounded() async throws {
        let app = Application(
            router: Router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)), services: [Stubborn()], logger: Self.logger)
        let clock = ContinuousClock()
        let started = clock.now
        await #expect(throws: ServerDidNotStop.self) {
            try await LiveServer.run(app, shutdownBound: .seconds(1)) { _ in }
        }
        #expect(clock.now - started < .seconds(30), "cancelled past the bound, not left to run")
    }
}
