import ArgumentParser
import BrokerDomain
import BrokerServer
import CommandLineSupport
import Configuration
import Foundation

struct Auditors: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage auditor accounts.", subcommands: [Add.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an auditor and mail them an activation link; they choose their password when activating.")

        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The auditor's email address.") var email: String

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let configuration: BrokerConfiguration
            do {
                configuration = try BrokerConfiguration(
                    reader: ConfigReader(providers: [
                        EnvironmentVariablesProvider(environmentVariables: ["DATABASE_URL": try database.resolved()]),
                        EnvironmentVariablesProvider(),
                    ]))
            } catch { fail("\(error)") }
            let mailer = try makeMailer(configuration: configuration, logger: logger)
            do {
                let account = try await withDatabase(url: configuration.databaseURL, logger: logger) { client in
                    let service = try await AccountService.standalone(
                        client: client, publicURL: configuration.publicURL, sessionTTL: configuration.sessionTTL)
                    let account = try await service.addAuditor(email: email, logger: logger)
                    // The activation mail is in the outbox; send it now rather than wait for a server to.
                    let delivery = MailDelivery(client: client, mailer: mailer, configuration: configuration.mailDelivery, logger: logger)
                    for _ in 0..<100 where try await delivery.deliverBatch() {}
                    return account
                }
                print("Auditor \(account.email) added (pending); the activation mail was sent via \(configuration.mailTransport.rawValue).")
            } catch let error as AccountError {
                fail(error.problem.errors.map { "\($0.field) \($0.message)" }.first ?? error.problem.detail)
            }
        }
    }
}
