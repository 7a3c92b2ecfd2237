import Data4HelpClient
import Foundation
import OpenAPIURLSession
import Synchronization
import Testing

/// The generated Data4HelpClient against the live server: the spec, the server and the client agree.
@Suite("Data4HelpClient")
struct ClientTests {
    @Test("registers, activates from the mail, logs in and reads the profile through the generated client")
    func fullAccountFlow() async throws {
        try await TestHarness.run { harness in
            let port = try #require(harness.client.port)
            let token = Mutex<String?>(nil)
            let client = Client(
                serverURL: try #require(URL(string: "http://127.0.0.1:\(port)")),
                configuration: .data4Help,
                transport: URLSessionTransport(),
                middlewares: [BearerTokenMiddleware { token.withLock { $0 } }])
            let person = TestHarness.Person()

            let registered = try await client.registerUser(
                body: .json(
                    .init(
                        email: person.email, password: person.password, fiscalCode: person.fiscalCode,
                        fullName: person.fullName, birthDate: person.birthDate, sex: .f)))
            #expect(try registered.accepted.body.json.email == person.email)

            let activationToken = try #require(try await harness.activationToken(for: person.email))
            let activated = try await client.activateAccount(body: .json(.init(token: activationToken)))
            #expect(try activated.ok.body.json.status == .active)

            let session = try await client.createSession(body: .json(.init(email: person.email, password: person.password)))
            token.withLock { $0 = try? session.created.body.json.token }

            let me = try await client.getMe()
            #expect(try me.ok.body.json.fiscalCode == person.fiscalCode)

            _ = try await client.deleteCurrentSession()
            if case .unauthorized(let problem) = try await client.getMe() {
                #expect(try problem.body.applicationProblemJson.status == 401)
            } else {
                Issue.record("a revoked session still reads the profile")
            }
        }
    }
}
