/// Why a GPX file was refused; `message` says it to the person who uploaded it.
package enum GPXError: Error, Equatable, Sendable {
    case notXML(line: Int, reason: String)
    case notGPX
    case noPoints
    case badPoint(line: Int, reason: String)
    case tooManyPoints
    case declaresEntities

    package var message: String {
        switch self {
        case .notXML(let line, let reason): "the file is not well-formed XML (line \(line): \(reason))"
        case .notGPX: "the file is XML but not GPX: its root element is not <gpx>"
        case .noPoints: "the file has no track or route points"
        case .badPoint(let line, let reason): "line \(line): \(reason)"
        case .tooManyPoints: "the file has more than \(GPXTrack.maximumPoints) points"
        case .declaresEntities: "the file declares XML entities, which GPX files never do"
        }
    }
}
