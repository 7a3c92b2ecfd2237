import ArgumentParser
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation
import Logging
import PostgresNIO

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// People created for a benchmark through the real registration and activation path.
enum BenchPeople {
    struct Person: Sendable {
        var id: UUID
        var email: String
        var password: String
    }

    static func create(count: Int, client: DatabasePool, logger: Logger, prefix: String = "bench") async throws -> [Person] {
        let service = try await AccountService.standalone(client: client, publicURL: "http://127.0.0.1")
        var people: [Person] = []
        let run = UUID().uuidString.prefix(8).lowercased()
        for index in 0..<count {
            let email = "\(prefix)-\(run)-\(index)@bench.data4help.example"
            let password = "bench-password-\(index)"
            _ = try await service.register(
                AccountService.UserRegistration(
                    email: email, password: password,
                    fiscalCode: SyntheticFiscalCode.make(
                        // Far above the serials `d4h seed --people` uses, so bench people never collide with them.
                        serial: Int.random(in: 200_000_000..<SyntheticFiscalCode.serialCount),
                        birthDate: CalendarDate(year: 1980, month: 1, day: 1)!, sex: .male, place: "H501"),
                    fullName: "Bench Person", birthDate: "1980-01-01", sex: "M"), logger: logger)
            let account = try await service.activate(
                token: service.takeActivationToken(for: email, logger: logger) ?? "", password: nil, logger: logger)
            people.append(Person(id: account.id, email: email, password: password))
        }
        return people
    }

    static func logIn(_ person: Person, url: String, session: URLSession) async throws -> String {
        var request = URLRequest(url: URL(string: url)!.appendingPathComponent("v1/sessions"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: ["email": person.email, "password": person.password])
        let (data, _) = try await session.data(for: request)
        guard let token = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["token"] as? String else {
            throw ValidationError("login failed: \(String(decoding: data, as: UTF8.self))")
        }
        return token
    }
}
