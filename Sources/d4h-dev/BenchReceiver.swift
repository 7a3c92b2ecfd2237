import ArgumentParser
import AsyncHTTPClient
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// A webhook receiver on a loopback port that verifies every signature, as a third party's would. It
/// keeps connections alive (HTTP/1.1's default, Hummingbird's too) and counts them, so the bench shows
/// whether the sender reuses them.
enum BenchReceiver {
    /// The request context: Hummingbird's, plus the sender's end of the connection.
    struct Context: RequestContext {
        var coreContext: CoreRequestContextStorage
        let remoteAddress: SocketAddress?

        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            remoteAddress = source.channel.remoteAddress
        }
    }

    static func run(tally: ReceiverTally, logger: Logger, _ body: @Sendable (String) async throws -> Void) async throws {
        let router = Router(context: Context.self)
        router.post("/hook") { request, context -> HTTPResponse.Status in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            let signature = request.headers[HTTPField.Name(WebhookSignature.headerName)!] ?? ""
            tally.record(
                eventID: request.headers[HTTPField.Name(WebhookSignature.eventIDHeaderName)!],
                signatureValid: WebhookSignature.verify(header: signature, body: bytes.readableBytesView, secret: tally.secret),
                connection: context.remoteAddress.map { "\($0)" } ?? "?")
            return .noContent
        }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        // Threads of its own, as a receiver in another process has: on the event loops the bench's client also
        // posts from, a connection whose two ends land on the same thread is served with no wake-up between them,
        // and the direct baseline ran at 11,500 or 21,700 POSTs a second by where its connections landed.
        let threads = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        defer { threads.shutdownGracefully { _ in } }
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { portContinuation.yield($0.localAddress?.port ?? 0) }, eventLoopGroupProvider: .shared(threads), logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw ValidationError("the bench receiver did not start") }
            do {
                try await body("http://127.0.0.1:\(port)/hook")
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
