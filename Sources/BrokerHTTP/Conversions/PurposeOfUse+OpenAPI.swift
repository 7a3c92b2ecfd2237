import BrokerDomain
import BrokerOpenAPI

// A purpose's code from the domain to the contract, exhaustively: a new code is a compile error here, and
// openapi.yaml's `PurposeOfUse` must name it too. Requests read the code as a string (a field error, not a
// decoding failure), so there is no conversion the other way.

extension Components.Schemas.PurposeOfUse {
    init(_ purpose: PurposeOfUse) {
        switch purpose {
        case .treatment: self = .treat
        case .emergencyTreatment: self = .etreat
        case .clinicalTrialResearch: self = .clintrch
        case .healthcareResearch: self = .hresch
        case .publicHealth: self = .pubhlth
        case .patientSafety: self = .patsfty
        case .healthcareOperations: self = .hoperat
        case .healthcarePayment: self = .hpaymt
        case .healthcareMarketing: self = .hmarkt
        case .patientRequested: self = .patrqt
        }
    }
}
