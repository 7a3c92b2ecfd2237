import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

/// A single request as a FHIR R4 `Consent` resource (http://hl7.org/fhir/R4/consent.html), the form health
/// systems read consents in. It says what the receipts say, and names the person only by the pseudonym
/// the receipts use (`ConsentRecord.subject`). `docs/consent.md` has the mapping field by field; `make test`
/// validates the resource against the R4 models of PyPI's `fhir.resources` (scripts/fhir-check.sh).
struct FHIRConsent: Encodable {
    struct Coding: Encodable {
        var system: String?
        var code: String?
        var display: String?
    }

    struct CodeableConcept: Encodable {
        var coding: [Coding]
        var text: String?
    }

    struct Identifier: Encodable {
        var system: String
        var value: String
    }

    struct Reference: Encodable {
        var identifier: Identifier?
        var display: String?
    }

    struct Period: Encodable {
        var start: String?
        var end: String?
    }

    struct Attachment: Encodable {
        var contentType: String
        var data: String
        var title: String
        var creation: String
    }

    struct Actor: Encodable {
        var role: CodeableConcept
        var reference: Reference
    }

    struct Provision: Encodable {
        var type: String
        var period: Period?
        var actor: [Actor]
        var action: [CodeableConcept]
        var purpose: [Coding]
        var dataPeriod: Period?
        var code: [CodeableConcept]
    }

    var resourceType = "Consent"
    var id: String
    var identifier: [Identifier]
    var status: String
    var scope: CodeableConcept
    var category: [CodeableConcept]
    var patient: Reference?
    var dateTime: String
    var performer: [Reference]?
    var organization: [Reference]
    var sourceAttachment: Attachment?
    var policyRule: CodeableConcept
    var provision: Provision

    init(_ record: ConsentRecord) {
        let request = record.request
        let grant = request.grant
        let terms = grant?.terms ?? request.asked
        let subscription = request.subscription
        let ended = grant != nil && terms.subscriptionDays != nil && subscription.map { $0.status == .ended || $0.status == .expired } == true
        // What the provision's rule is, and whether it ever permitted anything.
        let permitted: Bool
        switch request.status {
        case .pending:
            (status, permitted) = ("proposed", true)
        case .accepted:
            (status, permitted) = (ended ? "inactive" : "active", true)
        case .refused:
            (status, permitted) = ("rejected", false)
        case .cancelled, .expired:
            (status, permitted) = ("inactive", false)
        }
        id = request.id.uuidString.lowercased()
        identifier = [Identifier(system: FHIRSystems.request, value: id)]
        if let grant { identifier.append(Identifier(system: FHIRSystems.grant, value: grant.id.uuidString.lowercased())) }
        scope = CodeableConcept(
            coding: [Coding(system: "http://terminology.hl7.org/CodeSystem/consentscope", code: "patient-privacy", display: "Privacy Consent")])
        category = [CodeableConcept(coding: [Coding(system: "http://loinc.org", code: "59284-0", display: "Consent Document")])]
        let person = record.subject.map { subject in
            Reference(
                identifier: Identifier(system: FHIRSystems.requestPseudonymPrefix + request.id.uuidString.lowercased(), value: subject))
        }
        patient = person
        // The person performs the consent once they decided; before that nobody has.
        performer = request.status == .accepted || request.status == .refused ? person.map { [$0] } : nil
        dateTime = Timestamp.rfc3339(grant?.grantedAt ?? request.decidedAt ?? request.createdAt)
        organization = [Reference(identifier: Identifier(system: "urn:ietf:rfc:3986", value: record.issuer), display: "Data4Help")]
        sourceAttachment = record.receipts.last.map { receipt in
            Attachment(
                contentType: "application/jose", data: Data(receipt.jws.utf8).base64EncodedString(),
                title: "Data4Help consent receipt (\(receipt.status.rawValue))", creation: Timestamp.rfc3339(receipt.issuedAt))
        }
        policyRule = CodeableConcept(
            coding: [Coding(system: "http://terminology.hl7.org/CodeSystem/v3-ActCode", code: "OPTIN", display: "opt-in")],
            text: "Data4Help: the person accepts or refuses each request; either side may end a subscription at any time.")
        // While the grant releases data: from the acceptance to the subscription's end (none for a one-off).
        var period: Period?
        var releasedUntil: Date?
        if let grant {
            let end = terms.subscriptionDays == nil ? nil : (subscription?.endedAt ?? subscription?.endsAt)
            period = Period(start: Timestamp.rfc3339(grant.grantedAt), end: end.map(Timestamp.rfc3339))
            releasedUntil = terms.subscriptionDays == nil ? grant.grantedAt : end
        }
        let dataEnd = [terms.windowTo, releasedUntil].compactMap { $0 }.min()
        let company = Reference(
            identifier: Identifier(system: FHIRSystems.vatNumber, value: request.thirdParty.vatNumber), display: request.thirdParty.companyName)
        provision = Provision(
            type: permitted ? "permit" : "deny", period: period,
            actor: [
                Actor(
                    role: CodeableConcept(
                        coding: [
                            Coding(
                                system: "http://terminology.hl7.org/CodeSystem/v3-ParticipationType", code: "IRCP", display: "information recipient")
                        ]),
                    reference: company)
            ],
            action: [
                CodeableConcept(coding: [Coding(system: "http://terminology.hl7.org/CodeSystem/consentaction", code: "access", display: "Access")])
            ],
            // The coded purpose (HL7 v3 ActReason), then the company's purpose in its own words.
            purpose: [
                Coding(system: PurposeOfUse.system, code: request.purposeCode.code, display: request.purposeCode.display),
                Coding(display: request.purpose),
            ],
            dataPeriod: terms.windowFrom == nil && dataEnd == nil
                ? nil : Period(start: terms.windowFrom.map(Timestamp.rfc3339), end: dataEnd.map(Timestamp.rfc3339)),
            code: terms.types.map { type in
                CodeableConcept(coding: [Coding(system: FHIRSystems.sampleType, code: type.rawValue, display: Self.display(type))])
            })
    }

    static func display(_ type: RequestedType) -> String {
        switch type {
        case .position: "position"
        case .sample(let sample): sample.rawValue.replacingOccurrences(of: "_", with: " ") + " (\(sample.unit))"
        }
    }

    /// The resource as the generated response body holds it (a JSON object).
    var resource: Components.Schemas.FHIRResource {
        get throws {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.withoutEscapingSlashes]
            return try JSONDecoder().decode(Components.Schemas.FHIRResource.self, from: try encoder.encode(self))
        }
    }
}
