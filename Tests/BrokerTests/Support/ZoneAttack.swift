import BrokerTestSupport
import Foundation

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// The known attack on privacy zones (Strava's, issue 27): a spectator watches a runner cross their zone on
/// many straight streets, keeps the last point seen before the runner vanished and the first one after they
/// reappeared, and fits a circle through them; with a zone centred on the runner's home the circle's centre
/// is the home. Positions are handled in metres east and north of a reference point (flat: exact enough over
/// the few kilometres of a zone).
enum ZoneAttack {
    /// Metres per degree of latitude on the sphere `GeoPoint.distance` uses.
    static let metresPerDegree = GeoPoint.earthRadius * .pi / 180

    static func point(east: Double, north: Double, from origin: GeoPoint) -> GeoPoint {
        GeoPoint(
            latitude: origin.latitude + north / metresPerDegree,
            longitude: origin.longitude + east / (metresPerDegree * cos(origin.latitude * .pi / 180)))
    }

    static func metres(_ point: GeoPoint, from origin: GeoPoint) -> (east: Double, north: Double) {
        (
            (point.longitude - origin.longitude) * metresPerDegree * cos(origin.latitude * .pi / 180),
            (point.latitude - origin.latitude) * metresPerDegree
        )
    }

    /// `count` straight streets through the area around `home`, each as points `step` metres apart from
    /// `reach` metres before to `reach` metres after their point nearest `home`: their bearings spread over
    /// a half turn, and each passes within 0.9 × `metres` of `home` (so it crosses any zone that hides at
    /// least that), at an offset that does not follow its bearing.
    static func streets(count: Int, around home: GeoPoint, metres: Double, reach: Double, step: Double) -> [[GeoPoint]] {
        (0..<count).map { index in
            let bearing = (180.0 * Double(index) / Double(count) + 7) * .pi / 180
            let slot = (index * 3) % count
            let offset = metres * (-0.9 + 1.8 * Double(slot) / Double(max(count - 1, 1)))
            let along = (east: sin(bearing), north: cos(bearing))
            let across = (east: cos(bearing), north: -sin(bearing))
            return stride(from: -reach, through: reach, by: step).map { t in
                point(east: offset * across.east + t * along.east, north: offset * across.north + t * along.north, from: home)
            }
        }
    }

    /// The points a spectator keeps from one walk along a street: the last seen before each disappearance
    /// and the first seen after each reappearance; `seen` is what the feed showed at each step (nil: hidden).
    static func edges(of seen: [GeoPoint?]) -> [GeoPoint] {
        var edges: [GeoPoint] = []
        for index in seen.indices.dropFirst() {
            switch (seen[index - 1], seen[index]) {
            case (let before?, nil): edges.append(before)
            case (nil, let after?): edges.append(after)
            default: break
            }
        }
        return edges
    }

    /// The least-squares circle through the points (Kåsa's algebraic fit: x² + y² + Dx + Ey + F = 0), as
    /// its centre; nil for fewer than three points or points on a line.
    static func fittedCentre(_ points: [GeoPoint], origin: GeoPoint) -> GeoPoint? {
        guard points.count >= 3 else { return nil }
        var m = [[Double]](repeating: [Double](repeating: 0, count: 4), count: 3)
        for point in points {
            let (x, y) = metres(point, from: origin)
            let row = [x, y, 1.0]
            let b = -(x * x + y * y)
            for i in 0..<3 {
                for j in 0..<3 { m[i][j] += row[i] * row[j] }
                m[i][3] += row[i] * b
            }
        }
        // Gaussian elimination with partial pivoting on the 3 × 3 normal equations.
        for column in 0..<3 {
            let pivot = (column..<3).max { abs(m[$0][column]) < abs(m[$1][column]) } ?? column
            m.swapAt(column, pivot)
            guard abs(m[column][column]) > 1e-9 else { return nil }
            for row in 0..<3 where row != column {
                let factor = m[row][column] / m[column][column]
                for k in column..<4 { m[row][k] -= factor * m[column][k] }
            }
        }
        let (d, e) = (m[0][3] / m[0][0], m[1][3] / m[1][1])
        return point(east: -d / 2, north: -e / 2, from: origin)
    }
}
