import Foundation

/// The points of a GeoJSON line (RFC 7946: positions are `[longitude, latitude(, elevation)]`).
enum GeoJSONLine {
    /// Why the text is not a line, in words.
    struct Refusal: Error, ExpressibleByStringLiteral, CustomStringConvertible {
        var description: String
        init(stringLiteral value: String) { description = value }
        init(_ text: String) { description = text }
    }

    static func points(in text: String) -> Result<[GeoPoint], GeoJSONLine.Refusal> {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            return .failure("not a JSON object")
        }
        return line(in: object)
    }

    private static func line(in object: [String: Any]) -> Result<[GeoPoint], GeoJSONLine.Refusal> {
        switch object["type"] as? String {
        case "LineString":
            guard let coordinates = object["coordinates"] as? [[Any]] else { return .failure("a LineString needs coordinates") }
            var points: [GeoPoint] = []
            for (index, position) in coordinates.enumerated() {
                guard position.count >= 2, let longitude = (position[0] as? NSNumber)?.doubleValue,
                    let latitude = (position[1] as? NSNumber)?.doubleValue, (-90...90).contains(latitude), (-180...180).contains(longitude)
                else { return .failure(Refusal("coordinate \(index) is not [longitude, latitude] in degrees")) }
                points.append(GeoPoint(latitude: latitude, longitude: longitude))
            }
            return .success(points)
        case "Feature":
            guard let geometry = object["geometry"] as? [String: Any] else { return .failure("the Feature has no geometry") }
            return line(in: geometry)
        case "FeatureCollection":
            let features = object["features"] as? [[String: Any]] ?? []
            guard features.count == 1 else { return .failure(Refusal("a FeatureCollection must hold exactly one line (it holds \(features.count))")) }
            return line(in: features[0])
        case let other?:
            return .failure(Refusal("a \(other) is not a line; upload a LineString"))
        case nil:
            return .failure("it has no type")
        }
    }
}
