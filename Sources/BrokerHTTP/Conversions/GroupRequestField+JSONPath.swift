import BrokerDomain

extension GroupRequestField {
    /// The API's name of the field: its JSON path in `GroupRequestCreation`, as a 422 names it.
    var jsonPath: String {
        switch self {
        case .types: "types"
        case .type(let index): "types[\(index)]"
        case .filterType(let index): "filters[\(index)].type"
        case .filterMin(let index): "filters[\(index)].min"
        case .filterMax(let index): "filters[\(index)].max"
        case .ageMin: "demographics.ageMin"
        case .ageMax: "demographics.ageMax"
        case .sex: "demographics.sex"
        case .criteria: "filters"
        case .windowFrom: "window.from"
        case .windowTo: "window.to"
        case .window: "window"
        case .bucket: "bucket"
        case .purpose: "purpose"
        case .subscriptionDays: "subscription.days"
        case .cellLoss: "privacy.cellLoss"
        case .purposeCode: "purposeCode"
        }
    }
}
