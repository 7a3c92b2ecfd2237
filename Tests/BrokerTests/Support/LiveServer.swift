import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle

/// Runs an application on its loopback port for the duration of a test, like HummingbirdTesting's
/// `.live`, with one difference that matters: a server that stops before it listens ends the test with
/// its reason.
///
/// `.live` waits for the server's port on a promise that nothing completes if the server never starts (a
/// service that throws first cancels the server; a bind that fails, say on a process out of file
/// descriptors), and that wait cannot be cancelled: the test, and the whole run after it, waits for ever
/// with every thread idle. That is how CI's run of the full suite stalled at the last stop (issue 17).
struct LiveServer<Base: ApplicationProtocol>: ApplicationProtocol, Service {
    typealias Responder = Base.Responder

    let base: Base
    let reportPort: @Sendable (Int) -> Void

    var responder: Responder { get async throws { try await base.responder } }
    var server: HTTPServerBuilder { base.server }
    var eventLoopGroup: any EventLoopGroup { base.eventLoopGroup }
    var configuration: ApplicationConfiguration { base.configuration }
    var logger: Logger { base.logger }
    var services: [any Service] { base.services }
    var processesRunBeforeServerStart: [@Sendable () async throws -> Void] { base.processesRunBeforeServerStart }

    @Sendable func onServerRunning(_ channel: any Channel) async {
        await base.onServerRunning(channel)
        reportPort(channel.localAddress?.port ?? 0)
    }

    /// Starts `app`, runs `body` with its port, then shuts it down gracefully and waits until it has.
    /// `shutdownBound`: how long the graceful stop may take before the services are cancelled and the call
    /// throws `ServerDidNotStop`.
    static func run<Value: Sendable>(_ app: Base, shutdownBound: Duration = .seconds(90), _ body: (Int) async throws -> Value)
        async throws -> Value
    {
        let (ports, portReported) = AsyncStream.makeStream(of: Int.self)
        let live = LiveServer(base: app, reportPort: { portReported.yield($0) })
        var configuration = ServiceGroupConfiguration(services: [live], logger: app.logger)
        // Every wait has a bound, the test server's stop too: past it the services are cancelled and the test
        // fails naming the stop, instead of the run waiting on it. (A server with its database unreachable
        // took a minute to stop while the import jobs' start-up lease waited; it now stops at once.)
        configuration.maximumGracefulShutdownDuration = shutdownBound
        let serviceGroup = ServiceGroup(configuration: configuration)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // However the server ends, the wait for its port below ends too.
                defer { portReported.finish() }
                try await serviceGroup.run()
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                try await group.next()  // the server's own error, if it threw one
                throw ServerDidNotStart()
            }
            let value: Value
            do {
                value = try await body(port)
            } catch {
                await serviceGroup.triggerGracefulShutdown()
                try? await group.waitForAll()
                throw error
            }
            await serviceGroup.triggerGracefulShutdown()
            let clock = ContinuousClock()
            let stopping = clock.now
            var failure: (any Error)?
            do {
                try await group.waitForAll()
            } catch {
                failure = error
            }
            // Past the bound the group cancels the services, which may then end without an error of their own.
            if clock.now - stopping >= shutdownBound { throw ServerDidNotStop(bound: shutdownBound, error: failure) }
            if let failure { throw failure }
            return value
        }
    }
}

struct ServerDidNotStop: Error, CustomStringConvertible {
    var bound: Duration
    var error: (any Error)?
    var description: String {
        "the server did not stop within \(bound) of its graceful shutdown and was cancelled" + (error.map { " (then: \($0))" } ?? "")
    }
}

struct ServerDidNotStart: Error, CustomStringConvertible {
    var description: String { "the server stopped before it listened on its port" }
}
