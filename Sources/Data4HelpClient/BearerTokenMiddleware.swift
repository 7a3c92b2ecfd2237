import Foundation
import HTTPTypes
@_exported import OpenAPIRuntime

/// Adds `Authorization: Bearer <token>` to every request of the generated `Client`; the token is read on
/// each request, so logging in or out changes it for the requests that follow.
public struct BearerTokenMiddleware: ClientMiddleware {
    private let token: @Sendable () -> String?

    public init(token: @escaping @Sendable () -> String?) { self.token = token }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let token = token() { request.headerFields[.authorization] = "Bearer \(token)" }
        return try await next(request, body, baseURL)
    }
}
