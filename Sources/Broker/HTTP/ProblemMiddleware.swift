import Foundation
import Hummingbird
import Logging
import OpenAPIRuntime

/// Turns every error into an RFC 9457 problem+json response: domain errors with their own status,
/// decoding failures as 400 (malformed JSON) or 422 (valid JSON, wrong fields), unknown ones as a bare 500.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = BrokerRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            let problem = Self.problem(for: error, logger: context.logger)
            return Self.response(for: problem)
        }
    }

    static func response(for problem: Problem) -> Response {
        var headers = problem.headers
        headers[.contentType] = "application/problem+json"
        headers[.cacheControl] = "no-store"
        return Response(status: problem.status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: problem.body)))
    }

    static func problem(for error: any Error, logger: Logger) -> Problem {
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

    private static func knownProblem(for error: any Error) -> Problem? {
        switch error {
        case let convertible as any ProblemConvertible: convertible.problem
        case let decoding as DecodingError: problem(for: decoding)
        default: nil
        }
    }

    /// JSON that does not parse is a 400; JSON that parses but has missing or mistyped fields is a 422 naming them.
    static func problem(for error: DecodingError) -> Problem {
        let (path, message): ([any CodingKey], String) = switch error {
        case .keyNotFound(let key, let context): (context.codingPath + [key], "is required")
        case .valueNotFound(_, let context): (context.codingPath, "must not be null")
        case .typeMismatch(let type, let context): (context.codingPath, "must be \(describe(type))")
        case .dataCorrupted(let context): (context.codingPath, "has an invalid value")
        @unknown default: ([], "is invalid")
        }
        let field = path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            .replacingOccurrences(of: ".[", with: "[")
        if field.isEmpty {
            return Problem(status: .badRequest, slug: "malformed-body", title: "Malformed request body",
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
        return Problem(status: .internalServerError, slug: "internal-error", title: "Internal server error",
                       detail: "Something went wrong on our side; the request was not completed.")
    }
}
