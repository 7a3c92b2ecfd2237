import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// GPX as real tools write it (issue 19): Apple Health's workout routes, route planners' routes and tracks,
/// GPX 1.0, several segments; and files that must be refused whole with a message naming the line.
@Suite("GPX tracks")
struct GPXTrackTests {
    private func parse(_ text: String) -> Result<GPXTrack, GPXError> {
        GPXTrack.parse(Data(text.utf8))
    }

    private func track(_ text: String) throws -> GPXTrack {
        switch parse(text) {
        case .success(let track): return track
        case .failure(let error): throw error
        }
    }

    private func error(_ text: String) -> GPXError? {
        if case .failure(let error) = parse(text) { return error }
        return nil
    }

    /// As an iPhone's Health export writes `workout-routes/route_….gpx` (one line per point, Apple's extensions).
    static let appleHealthRoute = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1" \
        xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
        xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">
         <metadata>
          <time>2026-06-10T17:05:40Z</time>
         </metadata>
         <trk>
          <name>Route 2026-06-10 6:26pm</name>
          <trkseg>
           <trkpt lon="9.190536" lat="45.464199"><ele>121.468216</ele><time>2026-06-10T16:26:55Z</time>\
        <extensions><speed>2.591357</speed><course>167.343750</course><hAcc>3.627285</hAcc><vAcc>2.853464</vAcc></extensions></trkpt>
           <trkpt lon="9.190601" lat="45.464101"><ele>121.501</ele><time>2026-06-10T16:26:56.5Z</time>\
        <extensions><speed>2.6</speed><course>168</course><hAcc>4.1</hAcc><vAcc>3</vAcc></extensions></trkpt>
          </trkseg>
         </trk>
        </gpx>
        """

    @Test("an Apple Health workout route: coordinates, elevation, times to the sub-second, hAcc as accuracy")
    func appleHealthRoute() throws {
        let track = try track(Self.appleHealthRoute)
        #expect(track.name == "Route 2026-06-10 6:26pm")
        #expect(track.segments.count == 1)
        let points = track.points
        #expect(points.count == 2)
        #expect(points[0].latitude == 45.464199 && points[0].longitude == 9.190536)
        #expect(points[0].elevation == 121.468216)
        #expect(points[0].accuracy == 3.627285)
        #expect(points[0].time == Timestamp.parse("2026-06-10T16:26:55Z"))
        #expect(points[1].time == Timestamp.parse("2026-06-10T16:26:56.5Z"))
        // The metadata's time belongs to the file, not to a point.
        #expect(!points.contains { $0.time == Timestamp.parse("2026-06-10T17:05:40Z") })
    }

    @Test("a route planner's route: <rte> points without elevation or times")
    func plannedRoute() throws {
        let track = try track(
            """
            <?xml version="1.0"?>
            <gpx version="1.1" creator="planner" xmlns="http://www.topografix.com/GPX/1/1">
              <wpt lat="45.0" lon="9.0"><name>Start area</name></wpt>
              <rte><name>Parco Sempione 10K</name>
                <rtept lat="45.4720" lon="9.1750"/>
                <rtept lat="45.4731" lon="9.1772"/>
                <rtept lat="45.4745" lon="9.1790"/>
              </rte>
            </gpx>
            """)
        #expect(track.name == "Parco Sempione 10K")
        #expect(track.points.count == 3, "waypoints are not part of the path")
        #expect(track.points.allSatisfy { $0.elevation == nil && $0.time == nil && $0.accuracy == nil })
    }

    @Test("a paused recording keeps its segments apart; GPX 1.0 and prefixed elements are read alike")
    func segmentsAndDialects() throws {
        let track = try track(
            """
            <gpx:gpx version="1.0" xmlns:gpx="http://www.topografix.com/GPX/1/0">
              <gpx:trk>
                <gpx:trkseg>
                  <gpx:trkpt lat="-33.8688" lon="151.2093"><gpx:ele>5</gpx:ele><gpx:time>2026-01-01T06:00:00+11:00</gpx:time></gpx:trkpt>
                  <gpx:trkpt lat="-33.8690" lon="151.2095"><gpx:time>2026-01-01T06:00:05+11:00</gpx:time></gpx:trkpt>
                </gpx:trkseg>
                <gpx:trkseg>
                  <gpx:trkpt lat="-33.8700" lon="151.2100"/>
                </gpx:trkseg>
              </gpx:trk>
            </gpx:gpx>
            """)
        #expect(track.segments.map(\.count) == [2, 1])
        #expect(track.points[0].time == Timestamp.parse("2025-12-31T19:00:00Z"))
        #expect(track.points[1].elevation == nil)
    }

    @Test("points straight in a <trk> (no <trkseg>) form one segment, and empty segments are dropped")
    func bareTrackPoints() throws {
        let track = try track(
            """
            <gpx version="1.1"><trk><trkseg></trkseg>
              <trkpt lat="1" lon="2"/><trkpt lat="1.001" lon="2.001"/><trkpt lat="1.002" lon="2.002"/>
            </trk></gpx>
            """)
        #expect(track.segments.map(\.count) == [3])
    }

    @Test(
        "invalid files are refused whole, with a message that names what and where",
        arguments: [
            ("not XML at all", "hello, this is not a GPX file", "not well-formed XML"),
            ("truncated", #"<gpx version="1.1"><trk><trkseg><trkpt lat="1" lon="2">"#, "not well-formed XML"),
            ("another XML document", #"<kml><Document/></kml>"#, "root element is not <gpx>"),
            ("no points", #"<gpx version="1.1"><metadata><name>empty</name></metadata></gpx>"#, "no track or route points"),
            ("latitude out of range", "<gpx>\n<trk><trkseg>\n<trkpt lat=\"91\" lon=\"2\"/></trkseg></trk></gpx>", "line 3: lat \"91\""),
            ("longitude missing", #"<gpx><trk><trkseg><trkpt lat="45"/></trkseg></trk></gpx>"#, "both lat and lon"),
            ("a coordinate that is no number", #"<gpx><rte><rtept lat="north" lon="2"/></rte></gpx>"#, "lat \"north\""),
            ("a bad elevation", #"<gpx><trk><trkseg><trkpt lat="1" lon="2"><ele>high</ele></trkpt></trkseg></trk></gpx>"#, "ele \"high\""),
            (
                "a bad time", #"<gpx><trk><trkseg><trkpt lat="1" lon="2"><time>yesterday</time></trkpt></trkseg></trk></gpx>"#,
                "time \"yesterday\""
            ),
        ])
    func invalidFiles(_ name: String, _ text: String, _ message: String) {
        let refused = error(text)
        #expect(refused != nil, "\(name) was accepted")
        #expect(refused?.message.contains(message) == true, "\(name): \(refused?.message ?? "accepted")")
    }

    @Test("one bad point refuses the file, even after good ones: nothing of it is returned")
    func allOrNothing() {
        let text = """
            <gpx><trk><trkseg>
            <trkpt lat="45.1" lon="9.1"/>
            <trkpt lat="45.2" lon="9.2"/>
            <trkpt lat="45.3" lon="999"/>
            </trkseg></trk></gpx>
            """
        #expect(error(text) == .badPoint(line: 4, reason: "lon \"999\" is not a longitude between -180 and 180"))
    }

    @Test("entity declarations are refused before expansion (billion laughs)")
    func entities() {
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE gpx [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
            <gpx><trk><name>&lol2;</name><trkseg><trkpt lat="1" lon="2"/></trkseg></trk></gpx>
            """
        #expect(error(laughs) == .declaresEntities)
    }

    /// Entities in a file libxml2 decodes from UTF-16: the byte search for `<!ENTITY` sees `<\0!\0E\0…` and missed
    /// them, and the coordinates came from the entity (issue 27, item 5).
    @Test("a GPX file in UTF-16, UTF-32 or a declared non-UTF-8 encoding is refused, naming the encoding; so is any DOCTYPE")
    func onlyUTF8WithoutDoctype() {
        let smuggled = """
            <?xml version="1.0" encoding="UTF-16"?>
            <!DOCTYPE gpx [<!ENTITY lat "45.4">]>
            <gpx><trk><trkseg><trkpt lat="&lat;" lon="9.1"/></trkseg></trk></gpx>
            """
        func utf16(_ text: String, bigEndian: Bool, byteOrderMark: Bool) -> Data {
            var bytes: [UInt8] = byteOrderMark ? (bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]) : []
            for unit in text.utf16 {
                bytes += bigEndian ? [UInt8(unit >> 8), UInt8(unit & 0xFF)] : [UInt8(unit & 0xFF), UInt8(unit >> 8)]
            }
            return Data(bytes)
        }
        let plain = """
            <gpx><trk><trkseg><trkpt lat="45.4" lon="9.1"/></trkseg></trk></gpx>
            """
        let cases: [(String, Data, GPXError)] = [
            ("UTF-16 LE with BOM", utf16(smuggled, bigEndian: false, byteOrderMark: true), .notUTF8("UTF-16 (little-endian)")),
            ("UTF-16 BE with BOM", utf16(smuggled, bigEndian: true, byteOrderMark: true), .notUTF8("UTF-16 (big-endian)")),
            ("UTF-16 LE without BOM", utf16(smuggled, bigEndian: false, byteOrderMark: false), .notUTF8("UTF-16 (little-endian)")),
            ("UTF-16 BE without BOM", utf16(smuggled, bigEndian: true, byteOrderMark: false), .notUTF8("UTF-16 (big-endian)")),
            ("UTF-16 without entities", utf16(plain, bigEndian: false, byteOrderMark: true), .notUTF8("UTF-16 (little-endian)")),
            (
                "declared Latin-1", Data(#"<?xml version="1.0" encoding='ISO-8859-1'?>\#n\#(plain)"#.utf8),
                .notUTF8("ISO-8859-1")
            ),
            // The bypasses of a first version, which skipped only spaces and tabs and read 256 bytes: a UTF-7 body
            // (`+ADw-+ACE-DOCTYPE …`) has neither NUL bytes nor `<!DOCTYPE`, and libxml2 expanded its entities.
            ("a line break before '='", Data("<?xml version=\"1.0\" encoding\n=\"UTF-7\"?>\n\(plain)".utf8), .notUTF8("UTF-7")),
            ("a carriage return after '='", Data("<?xml version=\"1.0\" encoding=\r'UTF-7'?>\n\(plain)".utf8), .notUTF8("UTF-7")),
            (
                "a declaration padded past 256 bytes",
                Data("<?xml version=\"1.0\"\(String(repeating: " ", count: 300)) encoding=\"UTF-7\"?>\n\(plain)".utf8), .notUTF8("UTF-7")
            ),
            ("a DTD without entities", Data("<!DOCTYPE gpx SYSTEM \"http://example.com/gpx.dtd\">\n\(plain)".utf8), .declaresDoctype),
            ("a lower-case doctype", Data("<!doctype gpx>\n\(plain)".utf8), .declaresDoctype),
        ]
        for (name, data, expected) in cases {
            var refused: GPXError?
            if case .failure(let error) = GPXTrack.parse(data) { refused = error }
            #expect(refused == expected, "\(name)")
        }
        // UTF-8, declared or not, with or without its byte-order mark, is read as before.
        let declared = #"<?xml version="1.0" encoding="utf-8"?>"#
        for accepted in [plain, declared + plain, "\u{FEFF}" + plain, "\u{FEFF}" + declared + "\n" + plain] {
            guard case .success(let track) = GPXTrack.parse(Data(accepted.utf8)) else {
                Issue.record("refused: \(accepted)")
                continue
            }
            #expect(track.points.count == 1)
        }
    }

    @Test("libxml2 is always told UTF-8, and line numbers in messages stay those of the file")
    func declarationReplaced() {
        let text = """
            <?xml version="1.0"
                  encoding="UTF-8"?>
            <gpx><trk><trkseg>
            <trkpt lat="45.1" lon="999"/>
            </trkseg></trk></gpx>
            """
        #expect(String(decoding: GPXTrack.declaredUTF8(Data(text.utf8)), as: UTF8.self).hasPrefix(#"<?xml version="1.0" encoding="UTF-8"?>"#))
        #expect(error(text) == .badPoint(line: 4, reason: "lon \"999\" is not a longitude between -180 and 180"))
    }
}
