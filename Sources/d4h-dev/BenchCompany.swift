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

/// A third party created for the bench through the real registration and activation path.
enum BenchCompany {
    struct Company: Sendable {
        var id: UUID
        var email: String
        var password: String
    }

    static func create(name: String = "Bench S.r.l.", prefix: String = "company", client: DatabasePool, logger: Logger) async throws -> Company {
        let service = try await AccountService.standalone(client: client, publicURL: "http://127.0.0.1")
        let email = "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())@bench.data4help.example"
        let password = "bench-company-password"
        let first10 = "1" + String((0..<9).map { _ in "0123456789".randomElement()! })
        _ = try await service.register(
            AccountService.ThirdPartyRegistration(
                email: email, password: password, vatNumber: first10 + String(VATNumber.checkDigit(for: first10)!),
                companyName: name, description: nil), logger: logger)
        let account = try await service.activate(token: service.takeActivationToken(for: email, logger: logger) ?? "", password: nil, logger: logger)
        return Company(id: account.id, email: email, password: password)
    }
}
