import BrokerDomain
import Foundation
import HTTPTypes

/// An RFC 9457 problem document plus the status and headers to send it with.
package struct Problem: Error, Sendable, Equatable {
    package var status: HTTPResponse.Status
    /// The last part of the problem type URI, `https://data4help.example/problems/<slug>`.
    package var slug: String
    package var title: String
    package var detail: String
    package var errors: [FieldError]
    package var headers: HTTPFields
    /// Extension members of the document (RFC 9457 §3.2), e.g. `renewsAt` of an exhausted privacy budget.
    package var members: [String: String] = [:]

    package init(
        status: HTTPResponse.Status, slug: String, title: String, detail: String, errors: [FieldError] = [],
        headers: HTTPFields = [:]
    ) {
        self.status = status
        self.slug = slug
        self.title = title
        self.detail = detail
        self.errors = errors
        self.headers = headers
    }

    package static let typeBase = "https://data4help.example/problems/"

    /// A problem for a plain status, for errors that carry nothing more specific.
    package static func status(_ status: HTTPResponse.Status, detail: String? = nil) -> Problem {
        let slug = status.reasonPhrase.lowercased().replacingOccurrences(of: " ", with: "-")
        return Problem(status: status, slug: slug, title: status.reasonPhrase, detail: detail ?? status.reasonPhrase + ".")
    }

    /// The 422 of every capability: well-formed, but these fields are invalid.
    package static func validationFailed(_ errors: [FieldError]) -> Problem {
        Problem(
            status: .unprocessableContent, slug: "validation-failed", title: "The request is invalid",
            detail: "One or more fields are invalid.", errors: errors)
    }

    package var body: Data {
        var document: [String: AnyEncodable] = [
            "type": .init(Problem.typeBase + slug), "title": .init(title), "status": .init(status.code),
            "detail": .init(detail),
        ]
        if !errors.isEmpty { document["errors"] = .init(errors) }
        for (name, value) in members where document[name] == nil { document[name] = .init(value) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(document)) ?? Data()
    }
}

extension Problem: ProblemConvertible {
    package var problem: Problem { self }
}
