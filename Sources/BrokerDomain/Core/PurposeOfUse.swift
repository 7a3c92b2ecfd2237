/// Why a company asks for data, as a code of HL7 v3 PurposeOfUse (code system
/// `http://terminology.hl7.org/CodeSystem/v3-ActReason`), next to the request's free-text purpose. A
/// receiver of the data (a `Consent`, a receipt) can act on the code; the person reads `plainWords`.
/// A chosen subset of the value set, documented in docs/purposes.md: adding a code is a migration (the
/// columns' CHECK) and a change of that table.
package enum PurposeOfUse: String, Sendable, CaseIterable, Equatable {
    case treatment = "TREAT"
    case emergencyTreatment = "ETREAT"
    case clinicalTrialResearch = "CLINTRCH"
    case healthcareResearch = "HRESCH"
    case publicHealth = "PUBHLTH"
    case patientSafety = "PATSFTY"
    case healthcareOperations = "HOPERAT"
    case healthcarePayment = "HPAYMT"
    case healthcareMarketing = "HMARKT"
    case patientRequested = "PATRQT"

    /// The code system the codes belong to, as a FHIR `Coding.system`.
    package static let system = "http://terminology.hl7.org/CodeSystem/v3-ActReason"

    /// What requests stored before codes existed were given (migration 0024): they were, nearly all, studies.
    package static let storedBeforeCodes = PurposeOfUse.healthcareResearch

    /// The code as HL7 writes it (`HRESCH`).
    package var code: String { rawValue }

    /// HL7's display of the code, as a FHIR `Coding.display`.
    package var display: String {
        switch self {
        case .treatment: "treatment"
        case .emergencyTreatment: "Emergency Treatment"
        case .clinicalTrialResearch: "clinical trial research"
        case .healthcareResearch: "healthcare research"
        case .publicHealth: "public health"
        case .patientSafety: "patient safety"
        case .healthcareOperations: "healthcare operations"
        case .healthcarePayment: "healthcare payment"
        case .healthcareMarketing: "healthcare marketing"
        case .patientRequested: "patient requested"
        }
    }

    /// The purpose as a person reads it before deciding: what the data will be used for, in everyday words.
    package var plainWords: String {
        switch self {
        case .treatment: "To treat you or care for your health"
        case .emergencyTreatment: "To treat you in an emergency"
        case .clinicalTrialResearch: "For a clinical trial"
        case .healthcareResearch: "For health research"
        case .publicHealth: "For public health (for example, tracking a disease in the population)"
        case .patientSafety: "To keep you safe (for example, watching over you during an event)"
        case .healthcareOperations: "To run or improve a health service"
        case .healthcarePayment: "To pay for or bill your care (insurance)"
        case .healthcareMarketing: "For marketing: to advertise or sell health products or services"
        case .patientRequested: "Because you asked for it"
        }
    }

    /// The code a client sent, or nil when it is none of the value set (codes are upper case, as HL7 writes them).
    package init?(code: String) {
        self.init(rawValue: code)
    }
}
