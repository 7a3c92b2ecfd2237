import BrokerDomain
import Foundation
import Hummingbird
import Logging
import OpenAPIRuntime
import PostgresNIO

/// Turns every error into an RFC 9457 problem+json response: domain errors with their own status,
/// decoding failures as 400 (malformed JSON) or 422 (valid JSON, wrong fields), unknown ones as a bare 500.
package struct ProblemMiddleware: RouterMiddleware {
    package init() {}

    package typealias Context = BrokerRequestContext

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            var problem = Self.problem(for: error, logger: context.logger)
            if problem.slug == Self.malformedBodySlug, !request.method.carriesBody {
                problem = Self.invalidParameters(request)
            }
            if problem.status == .unsupportedMediaType, let accepted = Self.acceptedBodies(path: request.uri.path) {
                problem.detail = "This endpoint accepts \(accepted) bodies."
            }
            // In the language the client asks for (`Accept-Language`, English by default): the document's
            // words only; its type, status and field names are the same in every language.
            return Self.response(for: problem.localized(to: Language(acceptLanguage: request.headers[.acceptLanguage])))
        }
    }

    static let malformedBodySlug = "malformed-body"

    /// The media types of the endpoints that take more than JSON, as a 415 names them (openapi.yaml lists
    /// the same); nil for the JSON endpoints, whose 415 says JSON.
    static func acceptedBodies(path: String) -> String? {
        switch path {
        case "/v1/me/imports/apple-health": "application/xml (an Apple Health export.xml) or application/zip (the iPhone's export.zip)"
        case "/v1/me/samples", "/v1/me/positions": "application/json or text/csv"
        default: nil
        }
    }

    /// A decoding failure of a request without a body is a query parameter of the wrong type
    /// (e.g. `limit=abc`): well-formed but invalid, so 422. The decoder does not say which parameter,
    /// so every one the request carries is named.
    static func invalidParameters(_ request: Request) -> Problem {
        let names = Set(request.uri.queryParameters.map { String($0.key) }).sorted()
        let fields = names.isEmpty ? ["query"] : names
        return Problem.validationFailed(fields.map { FieldError(field: $0, message: "has a value of the wrong type") })
    }

    static func response(for problem: Problem) -> Response {
        var headers = problem.headers
        headers[.contentType] = "application/problem+json"
        headers[.cacheControl] = "no-store"
        headers[.vary] = "Accept-Language"
        return Response(status: problem.status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: problem.body)))
    }

    package static func problem(for error: any Error, logger: Logger) -> Problem {
        switch error {
        case let convertible as any ProblemConvertible:
            return convertible.problem
        case let serverError as ServerError:
            if let known = knownProblem(for: serverError.underlyingError) { return known }
            if serverError.httpStatus != .internalServerError {
                return Problem.status(serverError.httpStatus, detail: detail(for: serverError.httpStatus))
            }
            return internalError(serverError.underlyingError, logger: logger)
        case let httpError as HTTPError:
            return Problem.status(httpError.status, detail: httpError.body ?? detail(for: httpError.status))
        default:
            if let known = knownProblem(for: error) { return known }
            return internalError(error, logger: logger)
        }
    }

    /// A value PostgreSQL cannot store (SQLSTATE class 22: a NUL character, a number out of range …)
    /// is the client's input, not our failure: 422, whichever path let it through validation.
    static func dataException(in error: any Error) -> Problem? {
        guard let state = PostgresErrors.psqlError(in: error)?.serverInfo?[.sqlState], state.hasPrefix("22") else {
            return nil
        }
        return Problem(
            status: .unprocessableContent, slug: "validation-failed", title: "The request is invalid",
            detail: "A value in the request cannot be stored (invalid characters or out of range).")
    }

    private static func knownProblem(for error: any Error) -> Problem? {
        // A domain error thrown inside a transaction arrives as itself (`withUnstrandedTransaction`), or wrapped in
        // PostgresTransactionError by PostgresNIO's own `withTransaction`.
        switch PostgresErrors.unwrapTransaction(error) {
        case let convertible as any ProblemConvertible: convertible.problem
        case let decoding as DecodingError: problem(for: decoding)
        default:
            if PostgresErrors.isOverload(error) {
                Problem.serverBusy
            } else if PostgresErrors.isConnectionFailure(error) || PostgresErrors.isReadOnlyServer(error) {
                Problem.databaseUnavailable
            } else {
                dataException(in: error)
            }
        }
    }

    /// JSON that does not parse is a 400; JSON that parses but has missing or mistyped fields is a 422 naming them.
    static func problem(for error: DecodingError) -> Problem {
        let (path, message): ([any CodingKey], String) =
            switch error {
            case .keyNotFound(let key, let context): (context.codingPath + [key], "is required")
            case .valueNotFound(_, let context): (context.codingPath, "must not be null")
            case .typeMismatch(let type, let context): (context.codingPath, "must be \(describe(type))")
            case .dataCorrupted(let context): (context.codingPath, "has an invalid value")
            @unknown default: ([], "is invalid")
            }
        let field = path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            .replacingOccurrences(of: ".[", with: "[")
        if field.isEmpty {
            return Problem(
                status: .badRequest, slug: malformedBodySlug, title: "Malformed request body",
                detail: "The body is not valid JSON of the expected shape.")
        }
        return Problem.validationFailed([FieldError(field: field, message: message)])
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type, is Int32.Type: "an integer"
        case is Double.Type, is Float.Type: "a number"
        case is Bool.Type: "true or false"
        default: type is any Collection.Type ? "an array" : "an object"
        }
    }

    private static func detail(for status: HTTPResponse.Status) -> String {
        switch status {
        case .unsupportedMediaType: "This endpoint accepts application/json bodies."
        case .notFound: "There is nothing at this path."
        case .badRequest: "The request could not be read."
        default: status.reasonPhrase + "."
        }
    }

    private static func internalError(_ error: any Error, logger: Logger) -> Problem {
        logger.error("unhandled error", metadata: ["error": "\(String(reflecting: error))"])
        return Problem(
            status: .internalServerError, slug: "internal-error", title: "Internal server error",
            detail: "Something went wrong on our side; the request was not completed.")
    }
}

extension HTTPRequest.Method {
    /// Whether requests of this method normally carry a body.
    var carriesBody: Bool { self == .post || self == .put || self == .patch }
}
