import Foundation

/// An upload of positions as sent, validated all at once, as samples are (`SampleBatch`): either every
/// position is valid, or the answer names every offending one and nothing is stored.
package enum PositionBatch {
    /// One position as received; `line` is set for CSV bodies (1-based, the header is line 1).
    package struct Entry: Sendable {
        package var at: String
        package var latitude: Double?
        package var longitude: Double?
        package var elevation: Double?
        package var accuracy: Double?
        package var line: Int?

        package init(at: String, latitude: Double?, longitude: Double?, elevation: Double? = nil, accuracy: Double? = nil, line: Int? = nil) {
            self.at = at
            self.latitude = latitude
            self.longitude = longitude
            self.elevation = elevation
            self.accuracy = accuracy
            self.line = line
        }
    }

    /// An hour of one fix a second, three times over: a run's upload fits, a runaway client does not.
    package static let maximumCount = 10_000
    /// From the Dead Sea shore's −430 m to above Everest, with room for a barometer's error.
    package static let elevations = -1_000.0...10_000.0
    /// A fix less precise than this (10 km) says nothing about where on a run someone is.
    package static let accuracies = 0.0...10_000.0

    /// The valid positions, or every problem found (`positions[3].latitude`, or `line 4` for CSV).
    package static func validate(_ entries: [Entry], now: Date) -> Result<[Position], SampleError> {
        guard !entries.isEmpty else {
            return .failure(.invalid([FieldError(field: "positions", message: "must hold at least one position")]))
        }
        guard entries.count <= maximumCount else {
            return .failure(.invalid([FieldError(field: "positions", message: "must hold at most \(maximumCount) positions per upload")]))
        }
        let latest = now.addingTimeInterval(SampleBatch.allowedClockSkew)
        var positions: [Position] = []
        positions.reserveCapacity(entries.count)
        var errors: [FieldError] = []
        for (index, entry) in entries.enumerated() {
            let place = entry.line.map { "line \($0)" } ?? "positions[\(index)]"
            func fail(_ field: String, _ message: String) {
                errors.append(
                    FieldError(field: entry.line == nil ? "\(place).\(field)" : place, message: entry.line == nil ? message : "\(field) \(message)"))
            }
            guard let at = Timestamp.parse(entry.at) else {
                fail("at", "must be an RFC 3339 time such as 2026-03-01T08:00:00Z")
                continue
            }
            guard at <= latest else {
                fail("at", "is more than 5 minutes in the future")
                continue
            }
            guard let latitude = entry.latitude, latitude.isFinite, (-90...90).contains(latitude) else {
                fail("latitude", "must be a number of degrees between -90 and 90")
                continue
            }
            guard let longitude = entry.longitude, longitude.isFinite, (-180...180).contains(longitude) else {
                fail("longitude", "must be a number of degrees between -180 and 180")
                continue
            }
            if let elevation = entry.elevation, !(elevation.isFinite && elevations.contains(elevation)) {
                fail("elevation", "must be between -1000 and 10000 metres")
                continue
            }
            if let accuracy = entry.accuracy, !(accuracy.isFinite && accuracies.contains(accuracy)) {
                fail("accuracy", "must be between 0 and 10000 metres")
                continue
            }
            positions.append(
                Position(at: at, latitude: latitude, longitude: longitude, elevation: entry.elevation, accuracy: entry.accuracy))
        }
        return errors.isEmpty ? .success(positions) : .failure(.invalid(FieldError.firstHundred(errors, of: "positions")))
    }
}
