import Foundation

/// Where a runner's track is hidden from spectators: around `centre` (their home, say), at least `metres`
/// from it in every direction.
///
/// A zone centred on the point and cut at its radius gives the point away (issue 27, the known attack on
/// Strava's zones): the points where a runner vanishes and reappears lie on one circle, whose centre a
/// spectator fits from a few crossings. So the area hidden is the person's `Disguise` of that home: a circle
/// of about 4 × `metres` whose centre is not the point, with an uneven band outside it. A spectator may fit
/// that circle's centre, its radius and the band, and learn `metres` from them: the rule below still leaves
/// the point anywhere in an annulus of about 5.9 × the zone's area (`Disguise.candidateArea`).
/// Spectators never see the point or the disguise: only the runner does, as they entered the zone.
package struct PrivacyZone: Sendable, Equatable {
    package var centre: GeoPoint
    package var metres: Int
    package var disguise: Disguise

    package static let metresRange = 100...1000

    package init(centre: GeoPoint, metres: Int, disguise: Disguise) {
        (self.centre, self.metres, self.disguise) = (centre, metres, disguise)
    }

    /// The hidden area around one of a person's homes, in absolute terms (degrees and metres), kept once per
    /// person and home (`privacy_zone_disguises`, migration 0020) and shared by every zone they set there,
    /// in every run, whenever: each fresh draw around one home would be one more area to intersect.
    package struct Disguise: Sendable, Equatable {
        /// Nil until stored.
        package var id: UUID?
        /// The point it was first drawn for, and that zone's radius: a later zone within the larger of its
        /// radius and `metres` of `home` is the same home (`reuse`).
        package var home: GeoPoint
        package var metres: Int
        /// The hidden circle: every point within `radius` of `centre` is hidden.
        package var centre: GeoPoint
        package var radius: Double
        /// The uneven edge beyond `radius`: up to `band` metres wide, varying with the bearing from `centre`
        /// by harmonics of orders `PrivacyZone.orders` and these phases (degrees). Orders 3 and more move no
        /// fitted centre.
        package var band: Double
        package var phases: [Double]

        /// The hidden radius is this many times the zone's radius when drawn.
        package static let radiusRatio = 4.0
        /// The home lies at least `nearest` × the zone's radius from the hidden centre (so the centre a
        /// spectator fits is never the home) and at least `margin` × it inside the hidden circle (so
        /// everything within the zone's radius is hidden, with room to spare).
        package static let nearest = 1.2
        package static let margin = 1.3
        /// The band's width, as ratios of the zone's radius.
        package static let bands = 0.2...0.4

        package init(id: UUID? = nil, home: GeoPoint, metres: Int, centre: GeoPoint, radius: Double, band: Double, phases: [Double]) {
            (self.id, self.home, self.metres, self.centre, self.radius, self.band, self.phases) = (id, home, metres, centre, radius, band, phases)
        }

        /// The area (m²) where a spectator who knows this rule, the hidden circle and the zone's radius `r`
        /// must still look for the home: the annulus `nearest × r … radiusRatio × r − margin × r` around the
        /// hidden centre, everywhere in which the rule puts the home equally likely (uniform by area).
        package static func candidateArea(metres: Int) -> Double {
            let r = Double(metres)
            let (inner, outer) = (nearest * r, (radiusRatio - margin) * r)
            return Double.pi * (outer * outer - inner * inner)
        }

        /// A new disguise for a zone at `home` with radius `metres`: the hidden centre uniformly by area in
        /// the annulus above, the band drawn independently. `generator` is the system's secure one unless a
        /// test passes a seeded one.
        package static func draw(home: GeoPoint, metres: Int, using generator: inout some RandomNumberGenerator) -> Disguise {
            let r = Double(metres)
            let (inner, outer) = (nearest * r, (radiusRatio - margin) * r)
            let distance = sqrt(Double.random(in: inner * inner...outer * outer, using: &generator))
            let bearing = Double.random(in: 0..<360, using: &generator)
            return Disguise(
                home: home, metres: metres, centre: home.moved(by: distance, bearing: bearing), radius: radiusRatio * r,
                band: r * Double.random(in: bands, using: &generator), phases: orders.map { _ in Double.random(in: 0..<360, using: &generator) })
        }

        package static func draw(home: GeoPoint, metres: Int) -> Disguise {
            var generator = SystemRandomNumberGenerator()
            return draw(home: home, metres: metres, using: &generator)
        }

        /// Whether a zone at `point` with radius `metres` is at this disguise's home.
        package func isNear(_ point: GeoPoint, metres: Int) -> Bool { home.distance(to: point) <= Double(max(metres, self.metres)) }

        /// This disguise for a zone at `point` (near its home) with radius `metres`: the same centre, the
        /// radius grown just enough to keep the point `margin` × `metres` inside, if it is not already. The
        /// centre never moves and a stored disguise is never rescaled: two circles around one home with
        /// their ratios kept would put both centres on one ray from it.
        package func reused(for point: GeoPoint, metres: Int) -> Disguise {
            var disguise = self
            disguise.radius = max(radius, centre.distance(to: point) + Self.margin * Double(metres))
            disguise.metres = max(self.metres, metres)
            return disguise
        }
    }

    static let orders = [3.0, 5.0, 7.0]

    /// The centre of the hidden area.
    package var hiddenCentre: GeoPoint { disguise.centre }

    /// The hidden area's radius at its narrowest.
    package var hiddenMetres: Double { disguise.radius }

    /// Whether a spectator must not see a runner at `point`.
    package func hides(_ point: GeoPoint) -> Bool {
        let distance = disguise.centre.distance(to: point)
        let (inner, band) = (disguise.radius, disguise.band)
        if distance <= inner { return true }
        if distance > inner + band { return false }
        let bearing = disguise.centre.bearing(to: point)
        // The average of the harmonics, each between 0 and 1.
        let wave =
            zip(Self.orders, disguise.phases).map { order, phase in (1 + cos((order * bearing + phase) * .pi / 180)) / 2 }.reduce(0, +)
            / Double(Self.orders.count)
        return distance <= inner + band * wave
    }

    /// The disguise for a zone the person sets at `point` with radius `metres`, given the disguises they
    /// have: the nearest one at that home, grown if need be (`Disguise.reused`), else a new draw.
    package static func disguise(
        for point: GeoPoint, metres: Int, earlier: [Disguise], draw: () -> Disguise
    ) -> Disguise {
        let near = earlier.filter { $0.isNear(point, metres: metres) }.min { $0.home.distance(to: point) < $1.home.distance(to: point) }
        return near?.reused(for: point, metres: metres) ?? draw()
    }
}
