import ArgumentParser
import BrokerDomain
import BrokerServer
import CommandLineSupport
import Configuration
import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// `d4h`: the product's executable (the developers' commands are in `d4h-dev`).
@main
struct D4H: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "d4h",
        abstract: "Data4Help: a broker for sharing personal health data.",
        subcommands: [Serve.self, Migrate.self, Auditors.self, Audit.self, Consent.self, Import.self, SOS.self])

    static func main() async {
        limitMallocArenas()
        await runAsRoot(self)
    }
}
