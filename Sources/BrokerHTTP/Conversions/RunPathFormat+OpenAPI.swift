import BrokerDomain
import BrokerOpenAPI

extension RunPath.Format {
    /// Exhaustive: a format added to the contract is a compile error here until the domain reads it.
    init(_ format: Components.Schemas.RunPathInput.FormatPayload) {
        switch format {
        case .gpx: self = .gpx
        case .geojson: self = .geojson
        }
    }
}
