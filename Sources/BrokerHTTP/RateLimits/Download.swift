import HTTPTypes
import OpenAPIRuntime

/// A streamed download as the API and the console both send it: the response head, and the bytes,
/// produced from PostgreSQL while the client reads them (`ProducedByteStream`).
package struct Download: Sendable {
    package var head: HTTPResponse
    package var body: HTTPBody
    /// Whether the body may be sent compressed. Not a body that puts text a third party chose beside a secret
    /// of the reader's (`ResponseCoding` says why).
    package var compressible = true

    static let nextCursorHeader = HTTPField.Name("Data4Help-Next-Cursor")!

    /// The download as sent to a client whose request said `acceptEncoding` (`ResponseCoding`): the API's
    /// streamed endpoints and the console's downloads both send it so.
    package func encoded(acceptEncoding: String?) -> Download {
        guard compressible else { return self }
        let (head, body) = ResponseCoding.encode(head, body, acceptEncoding: acceptEncoding)
        return Download(head: head, body: body ?? self.body)
    }

    /// The head of a single request's download: never cached, the next cursor, and a file name when the
    /// format is one people save (CSV, GPX). Its format may come from `Accept` (no `?format`), so `Vary`
    /// names it for any cache that keeps it despite `no-store`.
    static func head(contentType: String, nextCursor: String, filename: String?) -> HTTPResponse {
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = contentType
        head.headerFields[.cacheControl] = "no-store"
        head.headerFields.append(HTTPField(name: .vary, value: "Accept"))
        head.headerFields[nextCursorHeader] = nextCursor
        if let filename { head.headerFields[.contentDisposition] = #"attachment; filename="\#(filename)""# }
        return head
    }
}
