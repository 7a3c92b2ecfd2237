import BrokerDomain
import BrokerHTTP
import Foundation
import Hummingbird
import OpenAPIRuntime

/// Pages for auditors: released group requests and their results, the audit log, the chain's verification.
/// Nothing here names a person: the services give auditors pseudonyms and aggregates only.
extension Console {
    func registerAuditorPages(on router: Router<BrokerRequestContext>) {
        get("/audit", .role(.auditor), on: router) { request in
            let page = try await request.listPage { cursor in
                try await request.services.groupRequests.auditList(
                    for: try request.caller, status: nil, page: PageRequest(limit: 100, cursor: cursor), logger: request.logger)
            }
            var values: [String: Any] = ["groupRequests": page.items.map(Self.groupItem), "hasGroupRequests": !page.items.isEmpty]
            ConsoleRequest.addPageLink("/audit", next: page.next, as: "olderLink", to: &values)
            return request.page("audit-group-requests", title: request.t("title.group-requests"), values: values)
        }
        get("/audit/privacy-ledger", .role(.auditor), on: router) { request in
            let page = try await request.listPage("after") { cursor in
                try await request.services.groupRequests.ledger(
                    for: try request.caller, page: PageRequest(limit: 100, cursor: cursor), logger: request.logger)
            }
            let entries = page.items
            var values: [String: Any] = [
                "entries": entries.map { entry in
                    [
                        "at": Wording.time(entry.at), "kind": entry.kind.rawValue, "cells": String(entry.cells),
                        "rho": PrivacyFormat.rho(entry.rho), "company": entry.companyID?.uuidString.lowercased() ?? "—",
                        "request": entry.requestID?.uuidString.lowercased() ?? "—",
                    ]
                },
                "hasEntries": !entries.isEmpty,
            ]
            ConsoleRequest.addPageLink("/audit/privacy-ledger", parameter: "after", next: page.next, as: "olderLink", to: &values)
            return request.page("audit-privacy-ledger", title: request.t("title.privacy-ledger"), values: values)
        }
        get("/audit/group-requests/:id", .role(.auditor), on: router) { request in
            let id = try request.id(orElse: GroupRequestError.notFound)
            let release = try await request.services.groupRequests.releasedResults(id: id, for: try request.caller, logger: request.logger)
            return request.page(
                "audit-group-request", title: request.t("title.released-results"),
                values: [
                    "id": id.uuidString.lowercased(), "releasedAt": Wording.time(release.releasedAt), "results": Self.resultRows(release),
                    "csvLink": "/audit/group-requests/\(id.uuidString.lowercased())/results.csv",
                ])
        }
        get("/audit/group-requests/:id/results.csv", .role(.auditor), on: router) { request in
            let id = try request.id(orElse: GroupRequestError.notFound)
            // As `GET /v1/audit/group-requests/{id}/results?format=csv`.
            let release = try await request.services.groupRequests.releasedResults(id: id, for: try request.caller, logger: request.logger)
            return Self.csvDownload(HTTPBody(GroupResultsCSV.text(release)), filename: "group-request-\(id.uuidString.lowercased()).csv")
        }

        get("/audit/events", .role(.auditor), on: router) { request in
            let filter = try Self.auditFilter(request.query)
            let page = try await request.listPage("after") { cursor in
                try await request.services.auditTrail.events(
                    filter.query, page: PageRequest(limit: 200, cursor: cursor), for: try request.caller, logger: request.logger)
            }
            let shown = page.items
            var values: [String: Any] = [
                "events": shown.map {
                    [
                        "seq": String($0.seq), "at": Wording.time($0.at), "actor": [$0.actorRole, $0.actorID ?? ""].joined(separator: " "),
                        "action": $0.action, "requestID": $0.requestID?.uuidString.lowercased() ?? "", "subject": $0.subject ?? "",
                        "details": $0.details,
                    ]
                },
                "hasEvents": !shown.isEmpty,
                "form": filter.echo,
                "csvLink": "/audit/events.csv" + filter.queryString,
            ]
            if let next = page.next {
                values["nextLink"] = "/audit/events" + filter.queryString + (filter.queryString.isEmpty ? "?" : "&") + "after=\(next.text)"
            }
            return request.page("audit-events", title: request.t("title.audit-log"), values: values)
        }
        // The API's own CSV export of the log (streamed, charged to the download budget).
        get("/audit/events.csv", .role(.auditor), on: router) { request in
            let filter = try Self.auditFilter(request.query)
            let body = try await request.services.budgeted.auditEventsCSV(filter.query, by: try request.caller, logger: request.logger)
            return Self.csvDownload(body, filename: "audit-events.csv")
        }

        get("/audit/verification", .role(.auditor), on: router) { request in
            let principal = try request.caller
            var values: [String: Any] =
                switch try await request.services.auditTrail.verify(for: principal, logger: request.logger) {
                case .valid(let events, let lastHash): ["valid": true, "events": String(events), "lastHash": lastHash]
                case .broken(let seq): ["valid": false, "brokenAt": String(seq)]
                }
            // The newest signed checkpoint, to download and keep, and the key to pin: what later proves the
            // log was neither truncated nor rewritten, which no verification of the log alone can.
            if let key = try request.services.auditCheckpoints.signingKey(for: principal) {
                values["publicKey"] = key.publicKeyText
                values["keyId"] = key.keyID
            }
            if let checkpoint = try await request.services.auditCheckpoints.latest(for: principal, logger: request.logger) {
                values["checkpoint"] = ["logSize": String(checkpoint.logSize), "signedAt": checkpoint.signedAt, "link": "/audit/checkpoint.json"]
            }
            return request.page("audit-verification", title: request.t("title.audit-chain-verification"), values: values)
        }

        get("/audit/checkpoint.json", .role(.auditor), on: router) { request in
            guard let checkpoint = try await request.services.auditCheckpoints.latest(for: try request.caller, logger: request.logger) else {
                throw Problem.status(.notFound, detail: "No audit checkpoint has been signed yet.")
            }
            var head = HTTPResponse(status: .ok)
            head.headerFields[.contentType] = "application/json"
            head.headerFields[.contentDisposition] = #"attachment; filename="audit-checkpoint-\#(checkpoint.logSize).json""#
            return Response(openAPI: head, body: HTTPBody(String(decoding: checkpoint.fileData, as: UTF8.self)))
        }
    }

    /// The audit log filter of `?from=&to=&action=` (days, inclusive), for the page and its CSV link.
    struct AuditFilter {
        var query: AuditTrail.Query
        var echo: [String: String]
        var queryString: String
    }

    static func auditFilter(_ fields: FormFields) throws -> AuditFilter {
        var errors: [FieldError] = []
        func day(_ name: String, plusDays: Int) -> Date? {
            guard let text = fields[name] else { return nil }
            guard let day = CalendarDate(iso: text), let date = Timestamp.parse(day.adding(days: plusDays).description + "T00:00:00Z") else {
                errors.append(FieldError(field: name, message: "must be a date (YYYY-MM-DD)"))
                return nil
            }
            return date
        }
        let from = day("from", plusDays: 0)
        let to = day("to", plusDays: 1)
        guard errors.isEmpty else { throw Problem.validationFailed(errors) }
        var echo: [String: String] = [:]
        var items: [URLQueryItem] = []
        for name in ["from", "to", "action"] {
            if let value = fields[name] {
                echo[name] = value
                items.append(URLQueryItem(name: name, value: value))
            }
        }
        var components = URLComponents()
        components.queryItems = items
        return AuditFilter(
            query: AuditTrail.Query(from: from, to: to, action: fields["action"]), echo: echo,
            queryString: items.isEmpty ? "" : "?" + (components.percentEncodedQuery ?? ""))
    }
}
