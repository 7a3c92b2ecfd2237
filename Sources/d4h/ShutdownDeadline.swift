import ArgumentParser
import BrokerDomain
import BrokerServer
import CommandLineSupport
import Configuration
import Dispatch
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

enum ShutdownDeadline {
    static let graceful: Duration = .seconds(10)
    static let total: Duration = .seconds(14)

    /// On the first SIGTERM or SIGINT, starts the clock that ends the process at `total`.
    static func arm(logger: Logger) {
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)  // delivered to the dispatch sources (ServiceLifecycle's and this one) instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(total.components.seconds))) {
                    logger.error("shutdown deadline passed: exiting with work still under way (its transactions roll back)")
                    fflush(nil)  // every open output stream, so the line above is not lost
                    _exit(1)
                }
            }
            source.resume()
            armed.append(source)
        }
    }

    /// Kept alive for the life of the process.
    nonisolated(unsafe) private static var armed: [any DispatchSourceSignal] = []
}
