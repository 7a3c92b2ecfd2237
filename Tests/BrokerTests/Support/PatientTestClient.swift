import HTTPTypes
import NIOCore

// `@testable` for `TestResponse`'s memberwise initialiser, which HummingbirdTesting keeps internal. Debug
// builds (the only ones `make test` makes) compile every package module with testing enabled.
@testable import HummingbirdTesting

/// The harness's HTTP client: HummingbirdTesting's own client for a live server, with a 120 s read timeout
/// instead of the framework's fixed 20 s. Under the whole suite on two cores, a server can take longer than
/// 20 s to answer (a queue of Argon2id hashes on the shared thread pool, a 16 MiB body); that is load on the
/// test machine, not what any test is about. A server that never answers still fails the test.
struct PatientTestClient: TestClientProtocol {
    /// How long a test waits for an answer, here and in `TestHarness.sendOnNewConnection`.
    static let readTimeout: Duration = .seconds(120)

    let connection: TestClient

    static func withClient<Value: Sendable>(port: Int, _ body: (PatientTestClient) async throws -> Value) async throws -> Value {
        let connection = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: readTimeout))
        connection.connect()
        let value: Value
        do {
            value = try await body(PatientTestClient(connection: connection))
        } catch {
            try? await connection.shutdown()
            throw error
        }
        // A server configured with a short HTTP_IDLE_TIMEOUT may have closed the idle connection already.
        try? await connection.shutdown()
        return value
    }

    func executeRequest(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> TestResponse {
        var headers = headers
        headers[.connection] = "keep-alive"
        let response = try await Self.execute(
            TestClient.Request(uri, method: method, authority: "localhost", headers: headers, body: body), on: connection)
        return TestResponse(head: response.head, body: response.body ?? ByteBuffer(), trailerHeaders: response.trailerHeaders)
    }

    /// `connection.execute`, bounded for real. HummingbirdTesting's own read timeout cannot end a request in
    /// flight (it waits for the response future, which ignores cancellation), so a server that never
    /// answers, or a close the client never noticed, would hang the test for ever. Closing the connection
    /// fails the request, and the test fails naming it.
    static func execute(_ request: TestClient.Request, on connection: TestClient) async throws -> TestClient.Response {
        try await withThrowingTaskGroup(of: TestClient.Response?.self) { group in
            group.addTask { try await connection.execute(request) }
            group.addTask {
                try await Task.sleep(for: readTimeout + .seconds(5))
                try? await connection.close(mode: .all)
                return nil
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let result { return result }
            }
            throw TestClient.Error.readTimeout
        }
    }

    var port: Int? { connection.port }
}
