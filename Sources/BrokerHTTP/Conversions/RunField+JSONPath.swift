import BrokerDomain

extension RunField {
    /// The API's name of the field: its JSON path in `RunCreation` and `RunEdit`, as a 422 names it.
    var jsonPath: String {
        switch self {
        case .name: "name"
        case .startsAt: "startsAt"
        case .durationMinutes: "durationMinutes"
        case .maxParticipants: "maxParticipants"
        case .path: "path"
        case .pathFormat: "path.format"
        }
    }
}
