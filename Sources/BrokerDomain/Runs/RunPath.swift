import Foundation

/// A run's path: the line runners follow, from its start to its finish, as the organiser uploaded it
/// (GPX from a route planner, or GeoJSON). Its start, middle and finish are where check-in, progress and
/// finish are judged.
package struct RunPath: Sendable, Equatable {
    package var points: [GeoPoint]

    package static let maximumPoints = 10_000
    /// No run is longer: a path beyond it is a mistake (a whole day's drive exported by accident).
    package static let maximumMetres = 300_000.0

    package var start: GeoPoint { points[0] }
    package var finish: GeoPoint { points[points.count - 1] }
    package var metres: Double { zip(points, points.dropFirst()).reduce(0) { $0 + $1.0.distance(to: $1.1) } }

    /// The point half the path's length from its start: a runner on a loop (start and finish in one place)
    /// must pass it before reaching the finish counts.
    package var middle: GeoPoint { point(atMetres: metres / 2) }

    /// The point `metres` along the path from its start (its finish beyond its length).
    package func point(atMetres metres: Double) -> GeoPoint {
        var walked = 0.0
        for (from, to) in zip(points, points.dropFirst()) {
            let leg = from.distance(to: to)
            if walked + leg >= metres, leg > 0 {
                let share = (metres - walked) / leg
                return GeoPoint(
                    latitude: from.latitude + (to.latitude - from.latitude) * share,
                    longitude: from.longitude + (to.longitude - from.longitude) * share)
            }
            walked += leg
        }
        return finish
    }

    package init(points: [GeoPoint]) {
        self.points = points
    }

    /// How an organiser uploads a path.
    package enum Format: Sendable, Equatable {
        case gpx
        case geojson
    }

    /// Why an uploaded path cannot be a run's, in words.
    package struct Unusable: Error, Equatable {
        package var message: String
    }

    /// The path of a GPX file (every segment, joined in order) or of GeoJSON (a LineString, or a Feature or
    /// FeatureCollection holding exactly one).
    package static func parse(format: Format, text: String) -> Result<RunPath, Unusable> {
        let points: [GeoPoint]
        switch format {
        case .gpx:
            switch GPXTrack.parse(Data(text.utf8)) {
            case .success(let track): points = track.points.map { GeoPoint(latitude: $0.latitude, longitude: $0.longitude) }
            case .failure(let error): return .failure(Unusable(message: "is not a usable GPX file: \(error.message)"))
            }
        case .geojson:
            switch GeoJSONLine.points(in: text) {
            case .success(let found): points = found
            case .failure(let message): return .failure(Unusable(message: "is not a usable GeoJSON line: \(message)"))
            }
        }
        return validated(RunPath(points: points))
    }

    static func validated(_ path: RunPath) -> Result<RunPath, Unusable> {
        guard path.points.count >= 2 else { return .failure(Unusable(message: "needs at least two points")) }
        guard path.points.count <= maximumPoints else { return .failure(Unusable(message: "has more than \(maximumPoints) points")) }
        guard path.metres >= 100, path.metres <= maximumMetres else {
            return .failure(Unusable(message: "must be 100 m to \(Int(maximumMetres / 1000)) km long (it is \(Int(path.metres)) m)"))
        }
        return .success(path)
    }
}
