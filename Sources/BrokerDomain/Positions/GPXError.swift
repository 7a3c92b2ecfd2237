/// Why a GPX file was refused; `message` says it to the person who uploaded it.
package enum GPXError: Error, Equatable, Sendable {
    case notXML(line: Int, reason: String)
    case notGPX
    case noPoints
    case badPoint(line: Int, reason: String)
    case tooManyPoints
    case declaresEntities
    case declaresDoctype
    /// The file is not UTF-8; the encoding it is in.
    case notUTF8(String)

    package var message: String {
        switch self {
        case .notXML(let line, let reason): "the file is not well-formed XML (line \(line): \(reason))"
        case .notGPX: "the file is XML but not GPX: its root element is not <gpx>"
        case .noPoints: "the file has no track or route points"
        case .badPoint(let line, let reason): "line \(line): \(reason)"
        case .tooManyPoints: "the file has more than \(GPXTrack.maximumPoints) points"
        case .declaresEntities: "the file declares XML entities, which GPX files never do"
        case .declaresDoctype: "the file has a DOCTYPE (a DTD), which GPX files never have"
        case .notUTF8(let encoding): "the file is encoded in \(encoding); GPX files are accepted in UTF-8 only (save it again as UTF-8)"
        }
    }
}
