import BrokerDomain
import BrokerHTTP
import Foundation
import Hummingbird
import NIOCore
import OpenAPIRuntime

/// Pages for people: the inbox of requests, their data, who saw it, blocked companies.
extension Console {
    func registerPersonPages(on router: Router<BrokerRequestContext>) {
        get("/inbox", .role(.user), on: router) { request in
            let principal = try request.caller
            // Every pending request, however many: each must be answerable. The rest: 100 a page.
            let pending = try await request.services.singleRequests.list(
                for: principal, status: .pending, page: PageRequest(limit: 1000), logger: request.logger
            ).items
            let page = try await request.listPage { cursor in
                try await request.services.singleRequests.list(
                    for: principal, status: nil, page: PageRequest(limit: 100, cursor: cursor), logger: request.logger)
            }
            let decided = page.items.filter { $0.status != .pending }
            let sharing = decided.filter { $0.subscription?.status == .active }
            let history = decided.filter { $0.subscription?.status != .active }
            let unshared = try await request.services.singleRequests.unsharedTypes(of: principal, logger: request.logger)
            var values: [String: Any] = [
                "pending": pending.map { Self.pendingItem($0, unshared: unshared) }, "hasPending": !pending.isEmpty,
                "subscriptions": sharing.map(Self.inboxItem), "hasSubscriptions": !sharing.isEmpty,
                "history": history.map(Self.inboxItem), "hasHistory": !history.isEmpty,
            ]
            ConsoleRequest.addPageLink("/inbox", next: page.next, as: "olderLink", to: &values)
            return request.page("inbox", title: request.t("title.requests-for-your-data"), values: values)
        }
        post("/requests/:id/accept", .role(.user), on: router) { request in
            let narrowing = try Self.grantNarrowing(request.form)
            let accepted = try await request.services.singleRequests.accept(
                id: try request.id(orElse: SingleRequestError.notFound), granting: narrowing, by: try request.caller,
                logger: request.logger)
            return request.redirect("/inbox", notice: accepted.grant?.narrowed == true ? "accepted-part" : "accepted")
        }
        singleRequestAction("/requests/:id/refuse", .user, on: router, then: "/inbox", notice: "refused") {
            try await $0.refuse(id: $1, by: $2, logger: $3)
        }
        singleRequestAction("/requests/:id/stop", .user, on: router, then: "/inbox", notice: "stopped") {
            try await $0.endSubscription(id: $1, by: $2, logger: $3)
        }

        get("/blocks", .role(.user), on: router) { request in
            let blocks = try await request.services.transparency.blocks(of: try request.caller, logger: request.logger)
            return request.page(
                "blocks", title: request.t("title.blocked-companies"),
                values: [
                    "blocks": blocks.map {
                        [
                            "id": $0.thirdParty.id.uuidString.lowercased(), "companyName": $0.thirdParty.companyName,
                            "vatNumber": $0.thirdParty.vatNumber, "blockedAt": Wording.time($0.blockedAt),
                        ]
                    },
                    "hasBlocks": !blocks.isEmpty,
                ])
        }
        post("/blocks/:id", .role(.user), on: router) { request in
            _ = try await request.services.transparency.block(
                try request.id(orElse: TransparencyError.companyNotFound), by: try request.caller,
                requests: request.services.singleRequests, logger: request.logger)
            return request.redirect("/blocks", notice: "blocked")
        }
        post("/blocks/:id/delete", .role(.user), on: router) { request in
            try await request.services.transparency.unblock(
                try request.id(orElse: TransparencyError.companyNotFound), by: try request.caller, logger: request.logger)
            return request.redirect("/blocks", notice: "unblocked")
        }

        get("/access-log", .role(.user), on: router) { request in
            let page = try await request.listPage { cursor in
                try await request.services.transparency.accessLog(
                    for: try request.caller, page: PageRequest(limit: 100, cursor: cursor), logger: request.logger)
            }
            let entries = page.items
            var values: [String: Any] = [
                "entries": entries.map {
                    [
                        "at": Wording.time($0.at), "companyName": $0.companyName ?? Wording.strings["access.you"],
                        "description": Wording.accessDescription($0),
                        "kind": Wording.accessKind($0.kind), "types": $0.types.map(Wording.typeWithUnit).joined(separator: ", "),
                    ]
                },
                "hasEntries": !entries.isEmpty,
            ]
            ConsoleRequest.addPageLink("/access-log", next: page.next, as: "olderLink", to: &values)
            return request.page("access-log", title: request.t("title.who-saw-your-data"), values: values)
        }

        get("/privacy", .role(.user), on: router) { request in
            let loss = try await request.services.personPrivacy.loss(of: try request.caller, logger: request.logger)
            return request.page("privacy", title: request.t("title.your-privacy-loss"), values: Wording.privacyLoss(loss))
        }

        get("/data", .role(.user), on: router) { request in
            let principal = try request.caller
            var charts: [[String: Any]] = []
            for statistics in try await request.services.budgeted.statisticsOfEveryType(principal, logger: request.logger) {
                guard !statistics.own.isEmpty else { continue }
                charts.append(HealthChart(statistics: statistics).values)
            }
            return request.page("my-data", title: request.t("title.your-data"), values: ["charts": charts, "hasCharts": !charts.isEmpty])
        }
        // Called by /console.js with the file as the body; answers JSON for the script (problem+json on failure):
        // a CSV's counts; an Apple Health import's result (as the API's), or, for a file large enough to run in
        // the background, 202 and the page that follows it (`location`).
        post("/data/upload", .role(.user), body: .upload, on: router) { request in
            let principal = try request.caller
            let kind = request.query["kind"] ?? "csv"
            let json: String
            var status = HTTPResponse.Status.ok
            switch kind {
            case "csv":
                let stored = try await request.services.budgeted.storeSamples(
                    csv: Self.httpBody(request.request.body), by: principal, logger: request.logger)
                json = #"{"accepted":\#(stored.accepted),"duplicates":\#(stored.duplicates),"skipped":0}"#
            case "apple-health-xml", "apple-health-zip":
                switch try await request.services.budgeted.importAppleHealth(
                    Self.httpBody(request.request.body), format: kind == "apple-health-zip" ? .zip : .xml, by: principal,
                    logger: request.logger)
                {
                case .finished(let result):
                    json = String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
                case .started(let job):
                    status = .accepted
                    json = #"{"status":"running","location":"/data/imports/\#(job.id.uuidString.lowercased())"}"#
                }
            default:
                throw Problem.validationFailed([FieldError(field: "kind", message: "must be csv, apple-health-xml or apple-health-zip")])
            }
            return Response(
                status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: json)))
        }

        // A background import: a progress bar that reloads itself every second while it runs (no script
        // needed), then what was imported or why nothing was.
        get("/data/imports/:id", .role(.user), on: router) { request in
            let job = try await request.services.imports.job(
                id: try request.id(orElse: ImportJobError.notFound), for: try request.caller, logger: request.logger)
            return request.page("import", title: request.t("title.apple-health-import"), values: ImportPage(job: job).values)
        }
    }

    /// A pending request with its accept form: each requested type a checkbox (checked, unless the person
    /// never shares it: then unchecked and disabled), the window's days and the subscription's length editable.
    static func pendingItem(_ request: SingleRequest, unshared: Set<SampleType>) -> [String: Any] {
        var item = inboxItem(request)
        let id = request.id.uuidString.lowercased()
        item["typeChoices"] = request.asked.types.map { type -> [String: Any] in
            let withheld = type.sampleType.map(unshared.contains) ?? false
            return [
                "inputID": "grant-\(id)-\(type.rawValue)", "value": type.rawValue, "label": Wording.typeWithUnit(type),
                "checked": !withheld, "disabled": withheld,
            ]
        }
        item["askedFrom"] = Wording.day(request.asked.windowFrom)
        item["askedTo"] = Wording.day(request.asked.windowTo)
        item["askedDays"] = request.asked.subscriptionDays.map(String.init) ?? ""
        item["hasSubscription"] = request.asked.subscriptionDays != nil
        return item
    }

    /// What the accept form grants. "Accept all" sends `scope=all`: everything asked that the person shares.
    /// Otherwise the checked types, and a window or subscription only where the person changed them; a
    /// day the person picked is widened to the whole day, then kept inside what was asked (so an unchanged
    /// field never counts as a change, and a changed one never reaches past the request).
    static func grantNarrowing(_ form: FormFields) throws -> GrantNarrowing {
        guard form["scope"] == "selected" else { return .everything }
        var errors: [FieldError] = []
        var narrowing = GrantNarrowing(types: form.values("types"))
        if let from = form["from"], from != form["askedFrom"],
            var start = FormValues.startOfDay(from, field: "window.from", into: &errors).flatMap(Timestamp.parse)
        {
            if let asked = form["askedFromTime"].flatMap(Timestamp.parse), start < asked { start = asked }
            narrowing.windowFrom = Timestamp.rfc3339(start)
        }
        if let to = form["to"], to != form["askedTo"],
            let dayAfter = FormValues.startOfDay(to, plusDays: 1, field: "window.to", into: &errors).flatMap(Timestamp.parse)
        {
            var end = dayAfter.addingTimeInterval(-0.001)
            if let asked = form["askedToTime"].flatMap(Timestamp.parse), end > asked { end = asked }
            narrowing.windowTo = Timestamp.rfc3339(end)
        }
        if let days = form["days"], days != form["askedDays"] {
            narrowing.subscriptionDays = FormValues.integer(days, field: "subscription.days", into: &errors)
        }
        guard errors.isEmpty else { throw SingleRequestError.invalid(errors) }
        return narrowing
    }

    /// One request as the inbox shows it: who, what, why, for how long. Once accepted, what was granted.
    static func inboxItem(_ request: SingleRequest) -> [String: Any] {
        [
            "id": request.id.uuidString.lowercased(),
            "companyName": request.thirdParty.companyName,
            "companyID": request.thirdParty.id.uuidString.lowercased(),
            "vatNumber": request.thirdParty.vatNumber,
            "types": request.types.map(Wording.typeWithUnit),
            "narrowed": request.grant?.narrowed == true,
            "askedTypes": request.asked.types.map(Wording.typeWithUnit).joined(separator: ", "),
            "purpose": request.purpose,
            "purposeWords": Wording.purpose(request.purposeCode),
            "window": Wording.window(from: request.windowFrom, to: request.windowTo),
            "askedFromTime": request.asked.windowFrom.map(Timestamp.rfc3339) ?? "",
            "askedToTime": request.asked.windowTo.map(Timestamp.rfc3339) ?? "",
            "duration": Wording.duration(subscriptionDays: request.grant.map { $0.terms.subscriptionDays } ?? request.subscription?.days),
            "status": request.subscription.map {
                Wording.strings.format(
                    "status.withSubscription",
                    [
                        "status": Wording.strings["status." + request.status.rawValue],
                        "subscription": Wording.strings["subscription." + $0.status.rawValue],
                    ])
            } ?? Wording.strings["status." + request.status.rawValue],
            "createdAt": Wording.time(request.createdAt),
            "endsAt": Wording.time(request.subscription?.endsAt),
        ]
    }
}
