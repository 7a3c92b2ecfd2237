import HTTPTypes
import OpenAPIRuntime

/// A streamed download as the API and the console both send it: the response head, and the bytes,
/// produced from PostgreSQL while the client reads them (`ProducedByteStream`).
package struct Download: Sendable {
    package var head: HTTPResponse
    package var body: HTTPBody

    static let nextCursorHeader = HTTPField.Name("Data4Help-Next-Cursor")!

    /// The head of a single request's download: never cached, the next cursor, and a file name when the
    /// format is one people save (CSV, GPX).
    static func head(contentType: String, nextCursor: String, filename: String?) -> HTTPResponse {
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = contentType
        head.headerFields[.cacheControl] = "no-store"
        head.headerFields[nextCursorHeader] = nextCursor
        if let filename { head.headerFields[.contentDisposition] = #"attachment; filename="\#(filename)""# }
        return head
    }
}
