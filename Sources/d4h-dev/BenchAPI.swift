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

/// JSON calls to the server under test.
struct BenchAPI {
    let http: HTTPClient
    let base: String

    func logIn(email: String, password: String) async throws -> String {
        let body = try await send(.POST, "/v1/sessions", token: nil, json: ["email": email, "password": password], expecting: 201)
        guard let token = (try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["token"] as? String else {
            throw ValidationError("login answered no token")
        }
        return token
    }

    @discardableResult
    func send(_ method: HTTPMethod, _ path: String, token: String?, json: [String: String]?, expecting status: UInt) async throws -> [UInt8] {
        try await send(
            method, path, token: token, body: try json.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) },
            expecting: status)
    }

    /// Sends `body` (JSON text) as is.
    @discardableResult
    func send(_ method: HTTPMethod, _ path: String, token: String?, body json: String?, expecting status: UInt) async throws -> [UInt8] {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        let response = try await http.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status.code == status else {
            throw ValidationError("\(method) \(path) answered \(response.status.code): \(String(buffer: body))")
        }
        return Array(body.readableBytesView)
    }
}
