import Foundation

/// Where a runner's track is hidden from spectators: around `centre` (their home, say), at least `metres`
/// from it in every direction.
///
/// A zone centred on the point and cut at its radius gives the point away (issue 27, the known attack on
/// Strava's zones): the points where a runner vanishes and reappears lie on one circle, whose centre a
/// spectator fits from a few crossings. So the area hidden is disguised, with random numbers drawn once for
/// the zone (`Disguise`):
/// - its centre is the point moved by more than `metres` (1.2–1.8 ×) in a random direction, so the centre a
///   spectator can fit lies more than `metres` from the point;
/// - its radius is that offset plus `metres` plus a random margin (0.1–0.3 ×), so everything within
///   `metres` of the point stays hidden;
/// - its edge lies further out by a band (0.2–0.4 × `metres` wide) that varies with the bearing from the
///   centre (three harmonics of random phases), so the points where the runner vanishes and reappears do not
///   draw one circle either. Only harmonics of order 3 and more: they move no fitted centre.
/// The hidden area is thus much larger than the zone (up to about 5 × `metres` from the point). Spectators
/// never see the point or the numbers: only the runner does, as they entered the zone.
package struct PrivacyZone: Sendable, Equatable {
    package var centre: GeoPoint
    package var metres: Int
    package var disguise: Disguise

    package static let metresRange = 100...1000

    package init(centre: GeoPoint, metres: Int, disguise: Disguise) {
        (self.centre, self.metres, self.disguise) = (centre, metres, disguise)
    }

    /// The random numbers of one zone, as ratios of its `metres` (so a zone keeps its shape wherever it is).
    package struct Disguise: Sendable, Equatable {
        /// Degrees clockwise from north, from the zone's point to the hidden area's centre.
        package var bearing: Double
        /// The hidden area's centre is this many `metres` from the point.
        package var offset: Double
        /// The hidden radius exceeds `offset + 1` by this many `metres`.
        package var margin: Double
        /// The edge's band is this many `metres` wide.
        package var band: Double
        /// The phases (degrees) of the band's harmonics, of orders `PrivacyZone.orders`.
        package var phases: [Double]

        package static let offsets = 1.2...1.8
        package static let margins = 0.1...0.3
        package static let bands = 0.2...0.4

        package init(bearing: Double, offset: Double, margin: Double, band: Double, phases: [Double]) {
            (self.bearing, self.offset, self.margin, self.band, self.phases) = (bearing, offset, margin, band, phases)
        }

        /// New numbers; `generator` is the system's secure one unless a test passes a seeded one.
        package static func draw(using generator: inout some RandomNumberGenerator) -> Disguise {
            Disguise(
                bearing: Double.random(in: 0..<360, using: &generator), offset: Double.random(in: offsets, using: &generator),
                margin: Double.random(in: margins, using: &generator), band: Double.random(in: bands, using: &generator),
                phases: orders.map { _ in Double.random(in: 0..<360, using: &generator) })
        }

        package static func draw() -> Disguise {
            var generator = SystemRandomNumberGenerator()
            return draw(using: &generator)
        }
    }

    static let orders = [3.0, 5.0, 7.0]

    /// The centre of the hidden area.
    package var hiddenCentre: GeoPoint { centre.moved(by: disguise.offset * Double(metres), bearing: disguise.bearing) }

    /// The hidden area's radius at its narrowest.
    package var hiddenMetres: Double { Double(metres) * (disguise.offset + 1 + disguise.margin) }

    /// Whether a spectator must not see a runner at `point`.
    package func hides(_ point: GeoPoint) -> Bool {
        let middle = hiddenCentre
        let distance = middle.distance(to: point)
        let inner = hiddenMetres
        let band = Double(metres) * disguise.band
        if distance <= inner { return true }
        if distance > inner + band { return false }
        let bearing = middle.bearing(to: point)
        // The average of the harmonics, each between 0 and 1.
        let wave =
            zip(Self.orders, disguise.phases).map { order, phase in (1 + cos((order * bearing + phase) * .pi / 180)) / 2 }.reduce(0, +)
            / Double(Self.orders.count)
        return distance <= inner + band * wave
    }

    /// The same zone set again keeps its numbers: a zone set once more within `metres` of one of the runner's
    /// earlier zones, with the same `metres`, takes that zone's numbers (else new ones are drawn). Each new
    /// draw around the same home would give a spectator one more centre, and the average of several is the
    /// home; with the same numbers the hidden area only moves with the point, by as little as it moved.
    package static func disguise(
        for centre: GeoPoint, metres: Int, earlier: [PrivacyZone], draw: () -> Disguise = { Disguise.draw() }
    ) -> Disguise {
        let same = earlier.filter { $0.metres == metres && $0.centre.distance(to: centre) <= Double(metres) }
        return same.min { $0.centre.distance(to: centre) < $1.centre.distance(to: centre) }?.disguise ?? draw()
    }
}
