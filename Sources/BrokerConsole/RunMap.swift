import BrokerDomain
import BrokerHTTP
import Foundation

/// A run's path drawn as SVG by the server (no map tiles: the machine may be offline), with its start,
/// finish (the start drawn over it, for a loop) and the runners' markers. Points are projected onto the plane around the path (longitude scaled
/// by the cosine of the latitude), which is exact enough over the few kilometres of a run; the projection's
/// numbers go to the page (`data-…`) so the script places live markers the same way. Only numbers and the
/// runners' public names (escaped) go into the SVG.
struct RunMap {
    let path: RunPath
    let runners: [LiveRunner]

    static let width = 800.0
    static let padding = 24.0

    /// Degrees to SVG units: x = (longitude − west) · kx + padding, y = (north − latitude) · ky + padding.
    var projection: (north: Double, west: Double, kx: Double, ky: Double, height: Double) {
        let latitudes = path.points.map(\.latitude)
        let longitudes = path.points.map(\.longitude)
        let (south, north) = (latitudes.min() ?? 0, latitudes.max() ?? 0)
        let (west, east) = (longitudes.min() ?? 0, longitudes.max() ?? 0)
        let squeeze = cos((south + north) / 2 * .pi / 180)
        let spanX = max((east - west) * squeeze, 1e-6)
        let spanY = max(north - south, 1e-6)
        let scale = min((Self.width - 2 * Self.padding) / spanX, 600 / spanY)
        return (north, west, scale * squeeze, scale, spanY * scale + 2 * Self.padding)
    }

    func point(_ point: GeoPoint) -> (x: Double, y: Double) {
        let p = projection
        return ((point.longitude - p.west) * p.kx + Self.padding, (p.north - point.latitude) * p.ky + Self.padding)
    }

    var svg: String {
        let strings = ConsoleStrings.current
        let p = projection
        let line = path.points.map {
            let xy = point($0)
            return "\(Self.n(xy.x)),\(Self.n(xy.y))"
        }.joined(separator: " ")
        let start = point(path.start)
        let finish = point(path.finish)
        var svg = """
            <svg id="run-map" class="run-map" viewBox="0 0 \(Self.n(Self.width)) \(Self.n(p.height))" role="img" aria-labelledby="run-map-title" \
            data-north="\(p.north)" data-west="\(p.west)" data-kx="\(p.kx)" data-ky="\(p.ky)" data-padding="\(Self.padding)">
            <title id="run-map-title">\(strings["runMap.title"])</title>
            <polyline class="run-path" points="\(line)"/>
            <rect class="run-finish" x="\(Self.n(finish.x - 9))" y="\(Self.n(finish.y - 9))" width="18" height="18"><title>\(strings["runMap.finish"])</title></rect>
            <circle class="run-start" cx="\(Self.n(start.x))" cy="\(Self.n(start.y))" r="6"><title>\(strings["runMap.start"])</title></circle>
            <g id="runners">
            """
        for runner in runners {
            let xy = point(runner.point)
            svg += """
                <g class="runner" data-bib="\(runner.bib)" transform="translate(\(Self.n(xy.x)) \(Self.n(xy.y)))">\
                <circle r="6"/><text x="9" y="4">\(Self.escape(runner.name))</text></g>
                """
        }
        return svg + "</g></svg>"
    }

    static func n(_ value: Double) -> String { String(format: "%.1f", value) }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
