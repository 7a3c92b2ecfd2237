import BrokerDomain
import BrokerOpenAPI

extension Components.Schemas.SharingPreferences {
    init(_ preferences: SharingPreferences) {
        self.init(types: preferences.entries.map { .init(_type: .init($0.type), shared: $0.shared) })
    }
}

extension SharingPreferences.Change {
    /// A setting of the body in domain terms. Its type is a free string in the contract, so a wrong one is
    /// a field error the service reports at its index, not a decoding failure.
    init(_ input: Components.Schemas.SharingSettingInput) {
        let type: Parsed<SampleType> = SampleType(rawValue: input._type).map { .value($0) } ?? .unreadable("is not a sample type")
        self.init(type: type, shared: input.shared)
    }
}
