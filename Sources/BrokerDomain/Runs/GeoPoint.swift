import Foundation

/// A point on the Earth in WGS 84 degrees, as GPS gives it.
package struct GeoPoint: Sendable, Equatable, Hashable {
    package var latitude: Double
    package var longitude: Double

    package init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Metres along the surface (haversine on a sphere of the Earth's mean radius). Within 0.5 % of the
    /// ellipsoid's distance, far inside a phone's GPS error, which is all a run's areas need.
    package func distance(to other: GeoPoint) -> Double {
        let radians = Double.pi / 180
        let dLatitude = (other.latitude - latitude) * radians
        let dLongitude = (other.longitude - longitude) * radians
        let a =
            sin(dLatitude / 2) * sin(dLatitude / 2)
            + cos(latitude * radians) * cos(other.latitude * radians) * sin(dLongitude / 2) * sin(dLongitude / 2)
        return 2 * Self.earthRadius * asin(min(1, sqrt(a)))
    }

    /// The initial bearing towards `other`, in degrees clockwise from north (0–360), on the same sphere.
    package func bearing(to other: GeoPoint) -> Double {
        let radians = Double.pi / 180
        let (from, to) = (latitude * radians, other.latitude * radians)
        let dLongitude = (other.longitude - longitude) * radians
        let y = sin(dLongitude) * cos(to)
        let x = cos(from) * sin(to) - sin(from) * cos(to) * cos(dLongitude)
        let degrees = atan2(y, x) / radians
        return degrees < 0 ? degrees + 360 : degrees
    }

    /// The point `metres` away along the great circle leaving at `bearing` (degrees clockwise from north).
    package func moved(by metres: Double, bearing: Double) -> GeoPoint {
        let radians = Double.pi / 180
        let angle = metres / Self.earthRadius
        let heading = bearing * radians
        let from = latitude * radians
        let to = asin(sin(from) * cos(angle) + cos(from) * sin(angle) * cos(heading))
        let dLongitude = atan2(sin(heading) * sin(angle) * cos(from), cos(angle) - sin(from) * sin(to))
        let longitude = (self.longitude * radians + dLongitude) / radians
        // Back into -180…180 across the antimeridian.
        return GeoPoint(latitude: to / radians, longitude: (longitude + 540).truncatingRemainder(dividingBy: 360) - 180)
    }

    static let earthRadius = 6_371_008.8
}
