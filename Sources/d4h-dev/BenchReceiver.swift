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
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// A webhook receiver on a loopback port that verifies every signature, as a third party's would.
enum BenchReceiver {
    static func run(tally: ReceiverTally, logger: Logger, _ body: @Sendable (String) async throws -> Void) async throws {
        let router = Router()
        router.post("/hook") { request, _ -> HTTPResponse.Status in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            let signature = request.headers[HTTPField.Name(WebhookSignature.headerName)!] ?? ""
            tally.record(
                eventID: request.headers[HTTPField.Name(WebhookSignature.eventIDHeaderName)!],
                signatureValid: WebhookSignature.verify(header: signature, body: bytes.readableBytesView, secret: tally.secret))
            return .noContent
        }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { portContinuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
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
