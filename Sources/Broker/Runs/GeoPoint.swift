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

    static let earthRadius = 6_371_008.8
}
