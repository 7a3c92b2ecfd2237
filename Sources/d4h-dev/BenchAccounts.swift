import ArgumentParser
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation

extension Bench {
    /// Activated accounts for scripts outside Swift (the fault scripts): created through the real
    /// registration and activation path, printed as JSON on stdout.
    struct Accounts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create activated users and third parties for a script; prints {users: [...], companies: [...]} as JSON.")

        @Option(help: "The server's database.") var databaseURL: String
        @Option(help: "Users to create.") var users = 4
        @Option(help: "Third parties to create.") var companies = 1

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let (people, parties) = try await withDatabase(url: databaseURL, logger: logger) { client in
                let people = try await BenchPeople.create(count: users, client: client, logger: logger, prefix: "script")
                var parties: [BenchCompany.Company] = []
                for _ in 0..<companies { parties.append(try await BenchCompany.create(client: client, logger: logger)) }
                return (people, parties)
            }
            let document: [String: Any] = [
                "users": people.map { ["id": $0.id.uuidString.lowercased(), "email": $0.email, "password": $0.password] },
                "companies": parties.map { ["id": $0.id.uuidString.lowercased(), "email": $0.email, "password": $0.password] },
            ]
            let data = try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        }
    }
}
