import BrokerDomain
import Foundation
import HTTPTypes
import Hummingbird
import OpenAPIHummingbird
import OpenAPIRuntime
import Synchronization

/// Records which methods the generated handlers register on each path, so the other methods of a known
/// path can answer 405 with `Allow` (Hummingbird alone would answer 404).
final class RouteRecordingTransport: ServerTransport {
    private let router: Router<BrokerRequestContext>
    private let routes = Mutex<[String: Set<HTTPRequest.Method>]>([:])

    /// Hand-written handlers that replace the generated ones for the same `METHOD path` (streamed bodies).
    private let replacements: [String: StreamingEndpoints.Handler]

    /// Checks the bearer token before a handler decodes anything.
    private let gate: AuthenticationGate
    /// Cuts short operations under way when the database goes away.
    private let outageGuard: OutageGuard

    init(
        router: Router<BrokerRequestContext>, replacements: [String: StreamingEndpoints.Handler] = [:],
        gate: AuthenticationGate, outageGuard: OutageGuard
    ) {
        self.router = router
        self.replacements = replacements
        self.gate = gate
        self.outageGuard = outageGuard
    }

    /// `METHOD path` of the operations whose request body `openapi.yaml` makes optional.
    static let optionalBodyOperations: Set<String> = ["POST /v1/runs/{id}/participation", "POST /v1/single-requests/{id}/accept"]

    func register(
        _ generated: @escaping @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?),
        method: HTTPRequest.Method,
        path: String
    ) throws {
        let chosen = replacements["\(method.rawValue) \(path)"] ?? generated
        // An operation whose body is optional (joining a run, accepting a request) gets none when the request carries none: the
        // transport hands every request a body, and the generated code would try to decode "" as JSON. Only
        // there, and only without a Content-Type, is the (small) body read first to tell.
        let optionalBody = Self.optionalBodyOperations.contains("\(method.rawValue) \(path)")
        let unguarded: StreamingEndpoints.Handler = { request, body, metadata in
            guard optionalBody, request.headerFields[.contentType] == nil, let body else { return try await chosen(request, body, metadata) }
            let bytes: [UInt8]
            do {
                bytes = try await [UInt8](collecting: body, upTo: 64 * 1024)
            } catch {
                throw Problem.status(.unsupportedMediaType, detail: "Send a Content-Type with a body.")
            }
            return try await chosen(request, bytes.isEmpty ? nil : HTTPBody(bytes), metadata)
        }
        let authenticated = gate.guarding(unguarded, method: method, path: path)
        let handler = path.hasPrefix("/v1/") ? outageGuard.guarding(authenticated) : authenticated
        try router.register(handler, method: method, path: path)
        if method == .get {
            // HEAD is GET without the body (RFC 9110 §9.3.2).
            try router.register(
                { request, body, metadata in
                    var get = request
                    get.method = .get
                    let (response, _) = try await handler(get, body, metadata)
                    return (response, nil)
                }, method: .head, path: path)
        }
        routes.withLock { $0[path, default: []].insert(method) }
    }

    /// Adds, for every registered path, OPTIONS (204 with `Allow`) and a 405 responder for every common
    /// method the path does not handle.
    func registerMethodNotAllowed() {
        let common: [HTTPRequest.Method] = [.get, .post, .put, .patch, .delete]
        for (path, methods) in routes.withLock({ $0 }) {
            var allowed = common.filter(methods.contains)
            if methods.contains(.get) { allowed.insert(.head, at: allowed.firstIndex(of: .get)! + 1) }
            let allow = (allowed + [.options]).map(\.rawValue).joined(separator: ", ")
            router.on(RouterPath(path), method: .options) { _, _ -> Response in
                Response(status: .noContent, headers: [.allow: allow])
            }
            for method in common where !methods.contains(method) {
                router.on(RouterPath(path), method: method) { _, _ -> Response in
                    throw Problem(
                        status: .methodNotAllowed, slug: "method-not-allowed", title: "Method not allowed",
                        detail: "This path accepts \(allow).", headers: [.allow: allow])
                }
            }
        }
    }
}
