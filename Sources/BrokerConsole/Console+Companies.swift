import BrokerDomain
import BrokerHTTP
import Foundation
import HTTPTypes
import Hummingbird
import OpenAPIRuntime

/// Pages for companies: their requests, composing single and group requests, results, settings.
extension Console {
    func registerCompanyPages(on router: Router<BrokerRequestContext>) {
        get("/company", .role(.thirdParty), on: router) { request in
            let principal = try request.caller
            let single = try await request.listPage("requests") { cursor in
                try await request.services.singleRequests.list(
                    for: principal, status: nil, page: PageRequest(limit: 100, cursor: cursor), logger: request.logger)
            }
            let group = try await request.listPage("groups") { cursor in
                try await request.services.groupRequests.list(
                    for: principal, status: nil, page: PageRequest(limit: 100, cursor: cursor), logger: request.logger)
            }
            let budget = try await request.services.groupRequests.budget(for: principal, logger: request.logger)
            var values: [String: Any] = [
                "singleRequests": single.items.map(Self.sentItem), "hasSingleRequests": !single.items.isEmpty,
                "groupRequests": group.items.map(Self.groupItem), "hasGroupRequests": !group.items.isEmpty,
                "budget": Self.budgetSentence(budget),
            ]
            ConsoleRequest.addPageLink("/company", parameter: "requests", next: single.next, as: "olderRequestsLink", to: &values)
            ConsoleRequest.addPageLink("/company", parameter: "groups", next: group.next, as: "olderGroupsLink", to: &values)
            return request.page("company", title: request.t("title.your-requests"), values: values)
        }

        get("/company/requests/new", .role(.thirdParty), on: router) { request in
            request.page(
                "single-request-new", title: request.t("title.ask-a-person-for-their-data"),
                values: Self.singleRequestFormValues(FormFields(), request))
        }
        post("/company/requests/new", .role(.thirdParty), on: router) { request in
            let form = request.form
            return try await request.submitting(
                "single-request-new", title: request.t("title.ask-a-person-for-their-data"),
                values: Self.singleRequestFormValues(form, request), fieldNames: Self.requestFieldNames
            ) {
                var errors: [FieldError] = []
                let days = FormValues.integer(form["subscriptionDays"], field: "subscriptionDays", into: &errors)
                let from = FormValues.startOfDay(form["windowFrom"], field: "windowFrom", into: &errors)
                let to = FormValues.startOfDay(form["windowTo"], plusDays: 1, field: "windowTo", into: &errors)
                // "Answer by" a day: the person may answer through that whole day (UTC).
                let expiresAt = FormValues.startOfDay(form["expiresOn"], plusDays: 1, field: "expiresOn", into: &errors)
                guard errors.isEmpty else { throw Problem.validationFailed(errors) }
                _ = try await request.services.singleRequests.create(
                    .init(
                        email: form["subjectEmail"], fiscalCode: form["subjectFiscalCode"], types: form.values("types"),
                        purpose: form["purpose"] ?? "", windowFrom: from, windowTo: to, subscriptionDays: days,
                        purposeCode: form["purposeCode"], expiresAt: expiresAt),
                    by: try request.caller, logger: request.logger)
                return request.redirect("/company", notice: "request-sent")
            }
        }
        singleRequestAction("/company/requests/:id/cancel", .thirdParty, on: router, then: "/company", notice: "cancelled") {
            try await $0.cancel(id: $1, by: $2, logger: $3)
        }
        singleRequestAction("/company/requests/:id/stop", .thirdParty, on: router, then: "/company", notice: "subscription-ended") {
            try await $0.endSubscription(id: $1, by: $2, logger: $3)
        }
        // The API's streamed download, as CSV.
        get("/company/requests/:id/data.csv", .role(.thirdParty), on: router) { request in
            let id = try request.id(orElse: SingleRequestError.notFound)
            let download = try await request.services.budgeted.singleRequestData(
                id: id, cursor: nil, format: .csv, by: try request.caller, logger: request.logger
            ).encoded(acceptEncoding: request.request.headers[.acceptEncoding])
            return Response(openAPI: download.head, body: download.body)
        }
        // The same, as FHIR R4 Observations in one Bundle (docs/fhir.md), for a hospital's system.
        get("/company/requests/:id/data.fhir.json", .role(.thirdParty), on: router) { request in
            let id = try request.id(orElse: SingleRequestError.notFound)
            let download = try await request.services.budgeted.singleRequestData(
                id: id, cursor: nil, format: .fhirBundle, by: try request.caller, logger: request.logger
            ).encoded(acceptEncoding: request.request.headers[.acceptEncoding])
            var response = Response(openAPI: download.head, body: download.body)
            response.headers[.contentDisposition] = #"attachment; filename="request-\#(id.uuidString.lowercased()).fhir.json""#
            return response
        }

        get("/company/group-requests/new", .role(.thirdParty), on: router) { request in
            request.page(
                "group-request-new", title: request.t("title.ask-for-anonymised-statistics"),
                values: try await Self.groupFormValues(FormFields(), request))
        }
        post("/company/group-requests/new", .role(.thirdParty), on: router) { request in
            let formValues = try await Self.groupFormValues(request.form, request)
            return try await request.submitting(
                "group-request-new", title: request.t("title.ask-for-anonymised-statistics"), values: formValues,
                fieldNames: GroupRequestForm.fieldNames
            ) {
                let form = try GroupRequestForm(request.form)
                let created: GroupRequest
                do {
                    created = try await request.services.budgeted.submitGroupRequest(form.read, by: try request.caller, logger: request.logger)
                } catch GroupRequestError.invalid(let violations) {
                    throw form.problem(violations)
                }
                return request.redirect("/company/group-requests/\(created.id.uuidString.lowercased())")
            }
        }
        get("/company/group-requests/:id", .role(.thirdParty), on: router) { request in
            let principal = try request.caller
            let id = try request.id(orElse: GroupRequestError.notFound)
            let group = try await request.services.groupRequests.request(id: id, for: principal, logger: request.logger)
            var values = Self.groupItem(group)
            if group.status == .accepted {
                // A release, as `GET /v1/group-requests/{id}/results` is: the same download budget.
                do {
                    let release = try await request.services.budgeted.groupResults(id: id, for: principal, logger: request.logger)
                    values["results"] = Self.resultRows(release)
                    values["csvLink"] = "/company/group-requests/\(id.uuidString.lowercased())/results.csv"
                } catch GroupRequestError.notReleased {
                    // A subscription whose first bucket has not closed yet: the page says so (and writes nothing).
                    values["nothingReleased"] = true
                }
            }
            return request.page("group-request", title: request.t("title.group-request"), values: values)
        }
        post("/company/group-requests/:id/stop", .role(.thirdParty), on: router) { request in
            let id = try request.id(orElse: GroupRequestError.notFound)
            _ = try await request.services.groupRequests.endSubscription(id: id, by: try request.caller, logger: request.logger)
            return request.redirect("/company/group-requests/\(id.uuidString.lowercased())", notice: "subscription-ended")
        }
        get("/company/group-requests/:id/results.csv", .role(.thirdParty), on: router) { request in
            let id = try request.id(orElse: GroupRequestError.notFound)
            // As `GET /v1/group-requests/{id}/results?format=csv`: the same budget, the same bytes.
            let release = try await request.services.budgeted.groupResults(id: id, for: try request.caller, logger: request.logger)
            return Self.csvDownload(HTTPBody(GroupResultsCSV.text(release)), filename: "group-request-\(id.uuidString.lowercased()).csv")
        }

        get("/company/settings", .role(.thirdParty), on: router) { request in
            try await request.page("company-settings", title: request.t("title.webhook-and-api-keys"), values: Self.settingsValues(request))
        }
        post("/company/webhook", .role(.thirdParty), on: router) { request in
            let current = try await Self.settingsValues(request)
            return try await request.submitting(
                "company-settings", title: request.t("title.webhook-and-api-keys"), values: current,
                fieldNames: ConsoleRequest.sameNames("url", "secret")
            ) {
                _ = try await request.services.webhooks.register(
                    try request.caller, url: request.form["url"] ?? "", secret: request.form.raw("secret"), logger: request.logger)
                return request.redirect("/company/settings", notice: "webhook-saved")
            }
        }
        post("/company/webhook/delete", .role(.thirdParty), on: router) { request in
            try await request.services.webhooks.remove(try request.caller, logger: request.logger)
            return request.redirect("/company/settings", notice: "webhook-removed")
        }
        post("/company/api-keys", .role(.thirdParty), on: router) { request in
            let current = try await Self.settingsValues(request)
            // A refused field (a name with a line break, a lifetime not offered) is shown beside it.
            return try await request.submitting(
                "company-settings", title: request.t("title.webhook-and-api-keys"), values: current,
                fieldNames: ConsoleRequest.sameNames("name", "expiresInDays")
            ) {
                // The form offers a few lifetimes; anything else is named as the field's error.
                var expiresAt: Date?
                if let days = request.form["expiresInDays"], !days.isEmpty {
                    guard let count = Int(days), [30, 90, 365].contains(count) else {
                        throw AccountError.invalid([FieldError(field: "expiresInDays", message: "must be 30, 90 or 365 days, or never")])
                    }
                    expiresAt = Date().addingTimeInterval(Double(count) * 86_400)
                }
                let (key, secret) = try await request.services.accounts.createAPIKey(
                    try request.caller, name: request.form["name"], scope: request.form["scope"], expiresAt: expiresAt,
                    logger: request.logger)
                var values = try await Self.settingsValues(request)
                // Shown once, on this response only: it is stored as a hash.
                values["newKey"] = ["name": key.name, "secret": secret.text]
                return request.page("company-settings", title: request.t("title.webhook-and-api-keys"), values: values)
            }
        }
        post("/company/api-keys/:id/delete", .role(.thirdParty), on: router) { request in
            try await request.services.accounts.revokeAPIKey(
                try request.caller, id: try request.id(orElse: AccountError.apiKeyNotFound), logger: request.logger)
            return request.redirect("/company/settings", notice: "api-key-revoked")
        }
    }

    // MARK: Values

    /// The API's field names of a single request (`window.from`, `types[1]` …) mapped to the form's (`windowFrom`, `types` …).
    static let requestFieldNames: [String: String] = {
        var names = [
            "subject": "subjectEmail", "subject.email": "subjectEmail", "subject.fiscalCode": "subjectFiscalCode",
            "types": "types", "purpose": "purpose", "window.from": "windowFrom", "window.to": "windowTo",
            "subscription.days": "subscriptionDays", "subscriptionDays": "subscriptionDays",
            "purposeCode": "purposeCode", "expiresAt": "expiresOn", "expiresOn": "expiresOn",
        ]
        for index in 0..<SampleType.allCases.count { names["types[\(index)]"] = "types" }
        return names
    }()

    /// The single request form's options and bounds, with what the company sent echoed back.
    static func singleRequestFormValues(_ form: FormFields, _ request: ConsoleRequest) -> [String: Any] {
        let today = CalendarDate.today
        return [
            "typeOptions": Wording.requestTypeOptions(selected: form.values("types")),
            "purposeOptions": Wording.purposeOptions(selected: form["purposeCode"]),
            // The last day whose end is still within the 90 days a request may wait.
            // Tomorrow: a day is answered by its end (00:00 UTC next), and today's end may be under the hour away.
            "expiresOnMin": today.adding(days: 1).description,
            "expiresOnMax": today.adding(days: SingleRequestService.maximumExpiryDays - 1).description,
            "defaultExpiryDays": request.services.singleRequests.pendingExpiryDays,
        ]
    }

    static func groupFormValues(_ form: FormFields, _ request: ConsoleRequest) async throws -> [String: Any] {
        let budget = try await request.services.groupRequests.budget(for: try request.caller, logger: request.logger)
        let today = CalendarDate.today
        var echoed = form.echo()
        echoed["windowFrom"] = echoed["windowFrom"] ?? today.adding(days: -6).description
        echoed["windowTo"] = echoed["windowTo"] ?? today.description
        return [
            "typeOptions": Wording.typeOptions(selected: form.values("types")),
            "filterRows": (1...3).map { row in
                [
                    "row": row, "min": form["filterMin\(row)"] ?? "", "max": form["filterMax\(row)"] ?? "",
                    "options": SampleType.allCases.map {
                        ["value": $0.rawValue, "label": Wording.typeWithUnit($0), "selected": form["filterType\(row)"] == $0.rawValue]
                    },
                ] as [String: Any]
            },
            "purposeOptions": Wording.purposeOptions(selected: form["purposeCode"]),
            "bucketOptions": Statistics.Bucket.allCases.map { ["value": $0.rawValue, "selected": (form["bucket"] ?? "day") == $0.rawValue] },
            "sexOptions": [
                ("", Wording.strings["group.anyone"]), ("F", Wording.strings["group.womenOption"]), ("M", Wording.strings["group.menOption"]),
            ].map {
                ["value": $0.0, "label": $0.1, "selected": (Wording.sexCode(form["sex"]) ?? "") == $0.0]
            },
            "form": echoed,
            "budget": Self.budgetSentence(budget),
            "defaultCellLoss": HealthChart.number(request.services.groupRequests.privacy.defaultCellLoss),
        ]
    }

    static func settingsValues(_ request: ConsoleRequest) async throws -> [String: Any] {
        let principal = try request.caller
        var values: [String: Any] = [:]
        do {
            let webhook = try await request.services.webhooks.webhook(of: principal, logger: request.logger)
            values["webhook"] = ["url": webhook.url, "updatedAt": Wording.time(webhook.updatedAt)]
        } catch WebhookError.notFound {}
        let keys = try await request.services.accounts.listAPIKeys(principal, page: PageRequest(limit: 100), logger: request.logger).items
        values["apiKeys"] = keys.map {
            [
                "id": $0.id.uuidString.lowercased(), "name": $0.name, "prefix": $0.prefix,
                "scope": Wording.strings[$0.scope == .readOnly ? "apiKey.readOnly" : "apiKey.full"], "createdAt": Wording.time($0.createdAt),
                "expiresAt": $0.expiresAt.map(Wording.time) ?? Wording.strings["apiKey.never"],
                "lastUsedAt": $0.lastUsedAt.map(Wording.time) ?? Wording.strings["apiKey.never"],
            ]
        }
        values["hasAPIKeys"] = !keys.isEmpty
        return values
    }

    static func sentItem(_ request: SingleRequest) -> [String: Any] {
        [
            "id": request.id.uuidString.lowercased(),
            "subject": request.subject.email ?? request.subject.fiscalCode ?? "",
            "types": request.asked.types.map(Wording.typeWithUnit).joined(separator: ", "),
            "granted": request.grant.map { grant in
                grant.narrowed ? Wording.grant(grant.terms) : Wording.strings["sent.allOfIt"]
            } ?? "",
            "purpose": request.purpose,
            "status": Wording.strings["status." + request.status.rawValue],
            "subscription": request.subscription.map {
                Wording.strings.plural("sent.subscription", count: $0.days, ["status": Wording.strings["subscription." + $0.status.rawValue]])
            } ?? Wording.strings["grant.once"],
            "createdAt": Wording.time(request.createdAt),
            "isPending": request.status == .pending,
            "isAccepted": request.status == .accepted,
            "canStop": request.subscription?.status == .active,
        ]
    }

}
