import BrokerDomain
import BrokerOpenAPI

extension GroupRequestService.CreationAsRead {
    /// The body in domain terms. What its syntax cannot say (a type that is no sample type, a date that is
    /// none) is named here; the service names what breaks its rules.
    init(_ body: Components.Schemas.GroupRequestCreation) {
        self.init(
            types: body.types.map(Self.sampleType),
            filters: (body.filters ?? []).map { .init(type: Self.sampleType($0._type), min: $0.min, max: $0.max) },
            ageMin: body.demographics?.ageMin, ageMax: body.demographics?.ageMax, sex: body.demographics?.sex.map { Parsed.value(Sex($0)) },
            windowFrom: Self.date(body.window.from), windowTo: Self.date(body.window.to), bucket: .value(Statistics.Bucket(body.bucket)),
            purpose: body.purpose, subscriptionDays: body.subscription?.days, cellLoss: body.privacy?.cellLoss,
            purposeCode: Self.purposeCode(body.purposeCode))
    }

    /// Types are free strings in the contract (so a wrong one is a field error, not a decoding failure).
    /// Shared with the console, whose form sends the same strings.
    package static func sampleType(_ text: String) -> Parsed<SampleType> {
        guard let type = SampleType(rawValue: text) else { return .unreadable("is not a sample type") }
        return .value(type)
    }

    package static func date(_ text: String) -> Parsed<CalendarDate> {
        guard let date = CalendarDate(iso: text) else { return .unreadable("must be a date as YYYY-MM-DD") }
        return .value(date)
    }
}
