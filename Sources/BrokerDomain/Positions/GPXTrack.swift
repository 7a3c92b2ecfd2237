import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A track as GPX files carry it (GPX 1.0 and 1.1): what route planners export (`<rte>` or `<trk>` points,
/// often without times), what phones record (`<trk>` points with times; Apple Health's
/// `workout-routes/*.gpx` add the horizontal accuracy `hAcc` in `<extensions>`). Each `<trkseg>` and each
/// `<rte>` is one segment: a recording paused and resumed is two, and they are never joined.
///
/// Parsing is all or nothing: a file with one bad point is refused whole, naming the line, so a caller
/// never stores part of a file.
package struct GPXTrack: Sendable, Equatable {
    package struct Point: Sendable, Equatable {
        package var latitude: Double
        package var longitude: Double
        /// Metres above sea level (`<ele>`), when the file has it.
        package var elevation: Double?
        /// Metres: the radius of the point's horizontal uncertainty (Apple's `hAcc`), when the file has it.
        package var accuracy: Double?
        package var time: Date?

        package init(latitude: Double, longitude: Double, elevation: Double? = nil, accuracy: Double? = nil, time: Date? = nil) {
            self.latitude = latitude
            self.longitude = longitude
            self.elevation = elevation
            self.accuracy = accuracy
            self.time = time
        }
    }

    /// The track's (or first route's) `<name>`, if any.
    package var name: String?
    /// Never empty, and no segment is empty.
    package var segments: [[Point]]

    package var points: [Point] { segments.flatMap { $0 } }

    /// More points than any run or workout needs (a point a second for 11 days): beyond it the file is refused.
    package static let maximumPoints = 1_000_000

    package static func parse(_ data: Data) -> Result<GPXTrack, GPXError> {
        // Foundation's parser (libxml2) decodes UTF-16 and UTF-32 and honours an encoding declaration, so the
        // byte searches below would see nothing in such a file: GPX is read as UTF-8 (or ASCII) only.
        if let encoding = foreignEncoding(of: data) { return .failure(.notUTF8(encoding)) }
        // Foundation's parser on Linux does not report entity declarations to its delegate: a GPX file has
        // no business declaring any, nor a DTD at all, so one that does is refused before it is parsed (no
        // expansion at all).
        if data.range(of: Data("<!ENTITY".utf8)) != nil { return .failure(.declaresEntities) }
        if containsDoctype(data) { return .failure(.declaresDoctype) }
        let reader = GPXReader()
        let parser = XMLParser(data: declaredUTF8(data))
        parser.delegate = reader
        // A GPX file needs no DTD and no entity of its own: refusing them keeps `<!ENTITY …>` expansion out.
        parser.shouldResolveExternalEntities = false
        let parsed = parser.parse()
        if let error = reader.error { return .failure(error) }
        guard parsed else {
            return .failure(.notXML(line: parser.lineNumber, reason: parser.parserError.map { "\($0.localizedDescription)" } ?? "unreadable"))
        }
        guard reader.sawRoot else { return .failure(.notGPX) }
        // A file cut short can parse "successfully" on Linux: an element left open means it ended too soon.
        guard reader.isClosed else { return .failure(.notXML(line: parser.lineNumber, reason: "the file ends before </gpx>")) }
        let segments = reader.segments.filter { !$0.isEmpty }
        guard !segments.isEmpty else { return .failure(.noPoints) }
        return .success(GPXTrack(name: reader.name, segments: segments))
    }
}

extension GPXTrack {
    /// The encoding `data` is in when it is not UTF-8 (or its ASCII subset), as a person would name it; nil otherwise.
    /// From the byte-order mark or the first bytes (XML 1.0, appendix F), then the XML declaration's `encoding`.
    static func foreignEncoding(of data: Data) -> String? {
        let head = Array(data.prefix(4))
        func starts(with bytes: [UInt8]) -> Bool { head.starts(with: bytes) }
        if starts(with: [0x00, 0x00, 0xFE, 0xFF]) || starts(with: [0x00, 0x00, 0x00, 0x3C]) { return "UTF-32 (big-endian)" }
        if starts(with: [0xFF, 0xFE, 0x00, 0x00]) || starts(with: [0x3C, 0x00, 0x00, 0x00]) { return "UTF-32 (little-endian)" }
        if starts(with: [0xFE, 0xFF]) || starts(with: [0x00, 0x3C]) { return "UTF-16 (big-endian)" }
        if starts(with: [0xFF, 0xFE]) || starts(with: [0x3C, 0x00]) { return "UTF-16 (little-endian)" }
        if starts(with: [0x4C, 0x6F, 0xA7, 0x94]) { return "EBCDIC" }
        // No text encoding but UTF-16 and UTF-32 puts NUL bytes in ASCII text, and XML allows none.
        if data.contains(0) { return "an encoding with NUL bytes (UTF-16 or UTF-32?)" }
        guard let declaration = xmlDeclaration(in: data) else { return nil }
        // EncodingDecl ::= S 'encoding' Eq ('"' EncName '"' | "'" EncName "'"), Eq ::= S? '=' S?, S ::= [ \t\r\n]+
        guard let key = declaration.range(of: "encoding") else { return nil }
        // By scalar: as Characters, "\r\n" is one, which neither "\r" nor "\n" matches.
        let rest = declaration[key.upperBound...].unicodeScalars.drop { [" ", "\t", "\r", "\n", "="].contains($0) }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return "an encoding its declaration does not name clearly" }
        let name = String(String.UnicodeScalarView(rest.dropFirst().prefix { $0 != quote }))
        return ["UTF-8", "UTF8", "US-ASCII", "ASCII"].contains(name.uppercased()) ? nil : name
    }

    /// The XML declaration (`<?xml …?>`, after an optional UTF-8 byte-order mark) without its `?>`, however
    /// long; nil when the file has none.
    private static func xmlDeclaration(in data: Data) -> Substring? {
        let body = data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data[...]
        guard body.starts(with: Array("<?xml".utf8)), let end = body.firstRange(of: Array("?>".utf8)) else { return nil }
        return String(decoding: body[..<end.lowerBound], as: UTF8.self)[...]
    }

    /// `data` with its XML declaration, if any, replaced by one that says UTF-8: `foreignEncoding` refused every
    /// other encoding it could recognise, and this makes sure libxml2 reads the bytes as the checks above did
    /// whatever a declaration says in a way they did not foresee.
    static func declaredUTF8(_ data: Data) -> Data {
        let body = data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data[...]
        var result = Data(#"<?xml version="1.0" encoding="UTF-8"?>"#.utf8)
        if body.starts(with: Array("<?xml".utf8)), let end = body.firstRange(of: Array("?>".utf8)) {
            // The declaration's own line breaks are kept, so line numbers in messages stay right.
            result.append(contentsOf: body[..<end.upperBound].filter { $0 == 0x0A })
            result.append(body[end.upperBound...])
        } else {
            result.append(body)
        }
        return result
    }

    /// Whether `<!DOCTYPE` appears anywhere, in any letter case (libxml2 reads DTDs whatever surrounds them).
    static func containsDoctype(_ data: Data) -> Bool {
        let doctype = Array("<!DOCTYPE".utf8)
        var searchFrom = data.startIndex
        while let start = data[searchFrom...].firstIndex(of: UInt8(ascii: "<")) {
            let candidate = data[start...].prefix(doctype.count)
            if candidate.count == doctype.count, zip(candidate, doctype).allSatisfy({ $0 & 0xDF == $1 & 0xDF }) { return true }
            searchFrom = data.index(after: start)
        }
        return false
    }
}

/// The SAX side of `GPXTrack.parse`: element names are matched without their namespace prefix, as files
/// from different tools prefix differently (or not at all).
private final class GPXReader: NSObject, XMLParserDelegate {
    var segments: [[GPXTrack.Point]] = []
    var name: String?
    var error: GPXError?
    var sawRoot = false

    private var pointCount = 0
    /// Points written straight into a `<trk>` (no `<trkseg>`, as some exporters do) share one segment.
    private var bareSegmentOpen = false
    private var point: GPXTrack.Point?
    private var pointLine = 0
    private var path: [String] = []
    var isClosed: Bool { path.isEmpty }
    private var text = ""

    private static func local(_ name: String) -> String {
        name.split(separator: ":").last.map(String.init) ?? name
    }

    private func fail(_ error: GPXError, _ parser: XMLParser) {
        if self.error == nil { self.error = error }
        parser.abortParsing()
    }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        let element = Self.local(elementName)
        if path.isEmpty {
            guard element == "gpx" else { return fail(.notGPX, parser) }
            sawRoot = true
        }
        path.append(element)
        text = ""
        switch element {
        case "trkseg", "rte":
            segments.append([])
            bareSegmentOpen = false
        case "trk":
            bareSegmentOpen = false
        case "trkpt", "rtept":
            if element == "trkpt", path.dropLast().last != "trkseg", !bareSegmentOpen {
                segments.append([])
                bareSegmentOpen = true
            }
            pointLine = parser.lineNumber
            guard let latText = attributes["lat"], let lonText = attributes["lon"] else {
                return fail(.badPoint(line: pointLine, reason: "a point needs both lat and lon attributes"), parser)
            }
            guard let latitude = Double(latText.trimmingCharacters(in: .whitespaces)), (-90...90).contains(latitude) else {
                return fail(.badPoint(line: pointLine, reason: "lat \"\(latText)\" is not a latitude between -90 and 90"), parser)
            }
            guard let longitude = Double(lonText.trimmingCharacters(in: .whitespaces)), (-180...180).contains(longitude) else {
                return fail(.badPoint(line: pointLine, reason: "lon \"\(lonText)\" is not a longitude between -180 and 180"), parser)
            }
            pointCount += 1
            guard pointCount <= GPXTrack.maximumPoints else { return fail(.tooManyPoints, parser) }
            point = GPXTrack.Point(latitude: latitude, longitude: longitude)
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        text += string
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        let element = Self.local(elementName)
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        defer {
            path.removeLast()
            text = ""
        }
        let parent = path.dropLast().last
        if point != nil {
            switch element {
            case "ele" where parent == "trkpt" || parent == "rtept":
                guard let elevation = Double(value), elevation.isFinite else {
                    return fail(.badPoint(line: parser.lineNumber, reason: "ele \"\(value)\" is not a number of metres"), parser)
                }
                point?.elevation = elevation
            case "time" where parent == "trkpt" || parent == "rtept":
                guard let time = Timestamp.parse(value) else {
                    return fail(.badPoint(line: parser.lineNumber, reason: "time \"\(value)\" is not an RFC 3339 time"), parser)
                }
                point?.time = time
            case "hAcc" where parent == "extensions":
                // Apple's own extension; a value that is not a non-negative number is dropped, not fatal.
                if let accuracy = Double(value), accuracy.isFinite, accuracy >= 0 { point?.accuracy = accuracy }
            case "trkpt", "rtept":
                if let point { segments[segments.count - 1].append(point) }
                point = nil
            default:
                break
            }
        } else if element == "name", name == nil, parent == "trk" || parent == "rte" {
            name = value.isEmpty ? nil : value
        }
    }
}
