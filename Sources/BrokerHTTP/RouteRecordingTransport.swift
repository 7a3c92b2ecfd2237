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
    /// The same, for bodies of buffers written as they are (`StreamingEndpoints.BufferHandler`).
    private let bufferReplacements: [String: StreamingEndpoints.BufferHandler]

    /// Checks the bearer token before a handler decodes anything.
    private let gate: AuthenticationGate
    /// Cuts short operations under way when the database goes away.
    private let outageGuard: OutageGuard

    init(
        router: Router<BrokerRequestContext>, replacements: [String: StreamingEndpoints.Handler] = [:],
        bufferReplacements: [String: StreamingEndpoints.BufferHandler] = [:], gate: AuthenticationGate, outageGuard: OutageGuard
    ) {
        self.router = router
        self.replacements = replacements
        self.bufferReplacements = bufferReplacements
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
        if let buffered = bufferReplacements["\(method.rawValue) \(path)"] {
            registerBuffered(buffered, method: method, path: path)
            return
        }
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
            // HEAD is GET without the body (RFC 9110 §9.3.2), framed as the GET would be: its length when it
            // is known, and none for a stream, whose length nobody knows before it is written. A streamed body
            // starts its producer on the first read, so the unread GET body reads and records nothing.
            try router.register(
                { request, body, metadata in
                    var get = request
                    get.method = .get
                    let (response, getBody) = try await handler(get, body, metadata)
                    guard let getBody else { return (response, nil) }
                    return (response, HTTPBody(AsyncStream<ArraySlice<UInt8>> { $0.finish() }, length: getBody.length, iterationBehavior: .multiple))
                }, method: .head, path: path)
        }
        routes.withLock { $0[path, default: []].insert(method) }
    }

    /// Registers a handler of shared buffers straight on the router, behind the same gate and guard as the
    /// others: OpenAPIHummingbird's own registration would copy every chunk of its body.
    private func registerBuffered(_ buffered: @escaping StreamingEndpoints.BufferHandler, method: HTTPRequest.Method, path: String) {
        let handler = outageGuard.guarding(gate.guarding(buffered, method: method, path: path))
        let respond: @Sendable (HTTPRequest, BrokerRequestContext, _ withBody: Bool) async throws -> Response = { request, context, withBody in
            let parameters = [String: Substring](context.parameters.map { (String($0.0), $0.1) }) { first, _ in first }
            let (head, body) = try await handler(request, nil, ServerRequestMetadata(pathParameters: parameters))
            // HEAD: the GET's framing (its length if known, else chunked) with nothing written.
            let sent = withBody ? body : ResponseBody(contentLength: body.contentLength) { writer in try await writer.finish(nil) }
            return Response(status: head.status, headers: head.headerFields, body: sent)
        }
        router.on(RouterPath(path), method: method) { request, context in try await respond(request.head, context, true) }
        if method == .get {
            // HEAD is GET without the body (RFC 9110 §9.3.2).
            router.on(RouterPath(path), method: .head) { request, context in
                var get = request.head
                get.method = .get
                return try await respond(get, context, false)
            }
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
