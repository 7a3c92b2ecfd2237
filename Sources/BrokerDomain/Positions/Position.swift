import Foundation

/// One GPS fix of a person: where they were at `at` (WGS 84 degrees), with the elevation and the horizontal
/// accuracy when the device gave them.
package struct Position: Sendable, Equatable {
    package var at: Date
    package var latitude: Double
    package var longitude: Double
    /// Metres above sea level.
    package var elevation: Double?
    /// Metres: the radius within which the device believes the person was.
    package var accuracy: Double?

    package init(at: Date, latitude: Double, longitude: Double, elevation: Double? = nil, accuracy: Double? = nil) {
        self.at = at
        self.latitude = latitude
        self.longitude = longitude
        self.elevation = elevation
        self.accuracy = accuracy
    }
}
