import BrokerDomain
import Foundation

/// One audit log event as a FHIR R4 `AuditEvent` (http://hl7.org/fhir/R4/auditevent.html), a line of the
/// auditors' NDJSON export. It shows exactly what the JSON page shows of the event, no more: the actor's id
/// as stored (a person's audit pseudonym; a company's or an auditor's account id; none for the system), the
/// subject's pseudonym, the stored `details`, and the chain's `seq`, `prev_hash` and `hash`. With `at` in
/// full (`recorded` keeps every microsecond), every field the chain hashes is in the line, so an auditor can
/// recompute the chain from the file alone. `docs/audit.md` has the mapping field by field; `make test`
/// validates the lines against the R4 models of PyPI's `fhir.resources` (scripts/fhir-check.sh).
struct FHIRAuditEvent: Encodable {
    /// The audit log's actions, as codes (`single_request.accepted` …).
    static let actionSystem = "https://data4help.example/fhir/CodeSystem/audit-action"
    /// The actor's role as the audit log stores it (`user`, `third_party`, `auditor`, `operator`, `system`,
    /// `anonymous`).
    static let roleSystem = "https://data4help.example/fhir/CodeSystem/audit-actor-role"
    /// The audit log's pseudonyms of people (`p_…`, `Pseudonymizer`): one person has one across the log.
    static let pseudonymSystem = "https://data4help.example/fhir/NamingSystem/audit-pseudonym"
    /// The account id of an actor that is not a person sharing data (a company, an auditor), as the JSON
    /// audit log shows it.
    static let accountActorSystem = "https://data4help.example/fhir/NamingSystem/audit-actor"
    /// The event's sequence number in the log.
    static let eventSystem = "https://data4help.example/fhir/NamingSystem/audit-event"
    static let groupRequestSystem = "https://data4help.example/fhir/NamingSystem/group-request"
    static let dicom = "http://dicom.nema.org/resources/ontology/DCM"
    static let hl7EventType = "http://terminology.hl7.org/CodeSystem/audit-event-type"
    static let entityType = "http://terminology.hl7.org/CodeSystem/audit-entity-type"
    static let objectRole = "http://terminology.hl7.org/CodeSystem/object-role"
    static let sourceType = "http://terminology.hl7.org/CodeSystem/security-source-type"

    struct Coding: Encodable, Equatable {
        var system: String
        var code: String
        var display: String?
    }

    struct CodeableConcept: Encodable {
        var coding: [Coding]
    }

    struct Identifier: Encodable {
        var system: String
        var value: String
    }

    struct Reference: Encodable {
        var identifier: Identifier?
        var display: String?
    }

    struct Agent: Encodable {
        var type: CodeableConcept
        var who: Reference?
        var requestor: Bool
    }

    struct Source: Encodable {
        var site: String
        var observer: Reference
        var type: [Coding]
    }

    struct Detail: Encodable {
        var type: String
        var valueString: String
    }

    struct Entity: Encodable {
        var what: Reference
        var type: Coding
        var role: Coding?
        var detail: [Detail]?
    }

    var resourceType = "AuditEvent"
    var id: String
    var type: Coding
    var subtype: [Coding]
    var action: String
    var recorded: String
    var outcome = "0"
    var agent: [Agent]
    var source: Source
    var entity: [Entity]

    /// `issuer` is the server's public URL (`PUBLIC_URL`), the observer that recorded the event.
    init(_ entry: AuditTrail.Entry, issuer: String) {
        id = String(entry.seq)
        type = Self.type(of: entry.action)
        subtype = [Coding(system: Self.actionSystem, code: entry.action)]
        action = Self.action(of: entry.action)
        recorded = Timestamp.rfc3339(entry.at)
        let who = entry.actorID.map { id in
            Reference(
                identifier: Identifier(system: entry.actorRole == Role.user.rawValue ? Self.pseudonymSystem : Self.accountActorSystem, value: id))
        }
        agent = [
            Agent(
                type: CodeableConcept(coding: [Coding(system: Self.roleSystem, code: entry.actorRole)]),
                who: who ?? (entry.actorRole == "system" ? Reference(display: "Data4Help") : nil), requestor: true)
        ]
        source = Source(
            site: "Data4Help", observer: Reference(identifier: Identifier(system: "urn:ietf:rfc:3986", value: issuer), display: "Data4Help"),
            type: [Coding(system: Self.sourceType, code: "4", display: "Application Server")])
        var entity = [
            Entity(
                what: Reference(identifier: Identifier(system: Self.eventSystem, value: String(entry.seq))),
                type: Coding(system: Self.entityType, code: "2", display: "System Object"), role: nil,
                detail: [
                    Detail(type: "seq", valueString: String(entry.seq)),
                    // `recorded` says the same; this is the chain's own spelling of it, six digits after the second.
                    Detail(type: "at", valueString: Self.chainTime(entry.at)),
                    Detail(type: "details", valueString: entry.details),
                    Detail(type: "prev_hash", valueString: entry.prevHash),
                    Detail(type: "hash", valueString: entry.hash),
                ])
        ]
        if let requestID = entry.requestID {
            let system = Self.isGroup(entry) ? Self.groupRequestSystem : FHIRSystems.request
            entity.append(
                Entity(
                    what: Reference(identifier: Identifier(system: system, value: requestID.uuidString.lowercased())),
                    type: Coding(system: Self.entityType, code: "2", display: "System Object"), role: nil, detail: nil))
        }
        if let subject = entry.subject {
            entity.append(
                Entity(
                    what: Reference(identifier: Identifier(system: Self.pseudonymSystem, value: subject)),
                    type: Coding(system: Self.entityType, code: "1", display: "Person"),
                    role: Coding(system: Self.objectRole, code: "1", display: "Patient"), detail: nil))
        }
        self.entity = entity
    }

    /// The event type of the action's family: data leaving Data4Help for a company is an export; accounts and
    /// their credentials are security events; a person's samples are their record; requests, grants,
    /// blocks and sharing preferences are changes made through the API.
    static func type(of action: String) -> Coding {
        switch action {
        case AuditAction.singleRequestDataReleased, AuditAction.groupResultsReleased:
            return Coding(system: dicom, code: "110106", display: "Export")
        case AuditAction.samplesCorrected:
            return Coding(system: dicom, code: "110110", display: "Patient Record")
        default:
            let family = action.prefix { $0 != "." }
            if ["account", "auditor", "second_factor", "api_key"].contains(family) {
                return Coding(system: dicom, code: "110113", display: "Security Alert")
            }
            return Coding(system: hl7EventType, code: "rest", display: "RESTful Operation")
        }
    }

    /// R4's AuditEventAction: C(reate), R(ead), U(pdate), D(elete), E(xecute).
    static func action(of action: String) -> String {
        switch action {
        case AuditAction.accountCreated, AuditAction.auditorAdded, AuditAction.apiKeyCreated, AuditAction.singleRequestCreated,
            AuditAction.thirdPartyBlocked:
            "C"
        case AuditAction.singleRequestDataReleased, AuditAction.groupResultsReleased:
            "R"
        case AuditAction.accountErased, AuditAction.accountExpired, AuditAction.accountReplaced, AuditAction.apiKeyRevoked,
            AuditAction.thirdPartyUnblocked, AuditAction.samplesCorrected:
            "D"
        case AuditAction.accountActivated, AuditAction.passwordChanged, AuditAction.passwordReset, AuditAction.secondFactorEnabled,
            AuditAction.secondFactorDisabled, AuditAction.singleRequestAccepted, AuditAction.singleRequestRefused,
            AuditAction.singleRequestCancelled, AuditAction.subscriptionEnded, AuditAction.subscriptionExpired,
            AuditAction.groupRequestAccepted, AuditAction.groupRequestRefused, AuditAction.sharingChanged:
            "U"
        default:
            // An action added later and not yet mapped: something was done, nothing more is claimed.
            "E"
        }
    }

    /// Whether the event's request is a group request: its own actions, and a subscription's end that says
    /// so (`details.kind`).
    static func isGroup(_ entry: AuditTrail.Entry) -> Bool {
        if entry.action.hasPrefix("group_request.") { return true }
        guard entry.action.hasPrefix("subscription."),
            let details = try? JSONSerialization.jsonObject(with: Data(entry.details.utf8)) as? [String: Any]
        else { return false }
        return details["kind"] as? String == "group"
    }

    /// `at` as the chain hashes it (`audit_event_canonical`): UTC, always six fractional digits.
    static func chainTime(_ date: Date) -> String {
        let text = Timestamp.rfc3339(date)
        guard let dot = text.firstIndex(of: ".") else { return text.dropLast() + ".000000Z" }
        let fraction = text[text.index(after: dot)..<text.index(before: text.endIndex)]
        return text[..<dot] + "." + fraction + String(repeating: "0", count: 6 - fraction.count) + "Z"
    }

    /// The event as one NDJSON line (its JSON, no line break inside, then one).
    static func line(_ entry: AuditTrail.Entry, issuer: String, encoder: JSONEncoder) throws -> [UInt8] {
        Array(try encoder.encode(FHIRAuditEvent(entry, issuer: issuer))) + [0x0A]
    }

    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }
}
