import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func auditListGroupRequests(_ input: Operations.AuditListGroupRequests.Input) async throws -> Operations.AuditListGroupRequests.Output {
        let principal = try await caller()
        let requests = try await services.groupRequests.auditList(
            for: principal, status: input.query.status.map(GroupRequest.Status.init),
            page: PageRequest(limit: input.query.limit, cursor: input.query.cursor), logger: logger)
        return .ok(.init(body: .json(.init(items: requests.items.map(Components.Schemas.GroupRequest.init), nextCursor: requests.next?.text))))
    }

    func auditGetGroupRequestResults(_ input: Operations.AuditGetGroupRequestResults.Input) async throws
        -> Operations.AuditGetGroupRequestResults.Output
    {
        let principal = try await caller()
        let format = try DownloadFormat.negotiate(format: input.query.format?.rawValue, accept: input.headers.accept.map(\.contentType.rawValue))
        let release = try await services.groupRequests.releasedResults(id: try groupRequestID(input.path.id), for: principal, logger: logger)
        switch format {
        // Group results are no Observations: FHIR is not offered, so `negotiate` never answers it here.
        case .json, .fhirBundle, .fhirNDJSON: return .ok(.init(body: .json(.init(release))))
        case .csv: return .ok(.init(body: .csv(HTTPBody(GroupResultsCSV.text(release)))))
        }
    }

    func auditListEvents(_ input: Operations.AuditListEvents.Input) async throws -> Operations.AuditListEvents.Output {
        let principal = try await caller()
        var errors: [FieldError] = []
        let from = input.query.from.flatMap { text in
            Timestamp.parse(text)
                ?? {
                    errors.append(.init(field: "from", message: "must be an RFC 3339 time"))
                    return nil
                }()
        }
        let to = input.query.to.flatMap { text in
            Timestamp.parse(text)
                ?? {
                    errors.append(.init(field: "to", message: "must be an RFC 3339 time"))
                    return nil
                }()
        }
        let format = try AuditLogFormat.negotiate(format: input.query.format?.rawValue, accept: input.headers.accept.map(\.contentType.rawValue))
        guard errors.isEmpty else { throw Problem.validationFailed(errors) }
        let query = AuditTrail.Query(from: from, to: to, action: input.query.action)
        switch format {
        case .csv:
            return .ok(.init(body: .csv(try await budgeted.auditEventsCSV(query, by: principal, logger: logger))))
        case .ndjson:
            let body = try await budgeted.auditEventsNDJSON(query, issuer: services.consentReceipts.issuer, by: principal, logger: logger)
            return .ok(.init(body: .applicationFhirNdjson(body)))
        case .json:
            break
        }
        let page = try await services.auditTrail.events(
            query, page: PageRequest(limit: input.query.limit, cursor: input.query.cursor), for: principal, logger: logger)
        return .ok(.init(body: .json(.init(items: try page.items.map(Components.Schemas.AuditEventItem.init), nextCursor: page.next?.text))))
    }

    func auditVerifyChain(_ input: Operations.AuditVerifyChain.Input) async throws -> Operations.AuditVerifyChain.Output {
        switch try await services.auditTrail.verify(for: try await caller(), logger: logger) {
        case .valid(let events, let lastHash):
            return .ok(.init(body: .json(.init(valid: true, events: Int(events), lastHash: lastHash))))
        case .broken(let seq):
            return .ok(.init(body: .json(.init(valid: false, brokenAt: Int(seq)))))
        }
    }
}

extension Components.Schemas.AuditEventItem {
    init(_ entry: AuditTrail.Entry) throws {
        self.init(
            seq: Int(entry.seq), at: entry.at, actor: .init(id: entry.actorID, role: entry.actorRole), action: entry.action,
            requestId: entry.requestID?.uuidString.lowercased(), subject: entry.subject,
            details: try JSONDecoder().decode(Components.Schemas.AuditEventItem.DetailsPayload.self, from: Data(entry.details.utf8)),
            prevHash: entry.prevHash, hash: entry.hash)
    }
}

/// Audit events as RFC 4180 CSV lines.
enum AuditCSV {
    static func line(_ entry: AuditTrail.Entry) -> String {
        [
            String(entry.seq), Timestamp.rfc3339(entry.at), entry.actorID ?? "", entry.actorRole, entry.action,
            entry.requestID?.uuidString.lowercased() ?? "", entry.subject ?? "", entry.details, entry.prevHash, entry.hash,
        ]
        .map(field).joined(separator: ",") + "\r\n"
    }

    /// Quoted when it holds a comma, quote or line break; quotes doubled.
    static func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
