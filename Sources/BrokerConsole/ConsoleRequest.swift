import BrokerDomain
import BrokerHTTP
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// One request to a console page: the visitor, the submitted form, and the helpers that render pages.
struct ConsoleRequest: Sendable {
    let console: Console
    let request: Request
    let context: BrokerRequestContext
    var principal: Principal?
    let csrfToken: String
    /// The page's words: the account's language, or the visitor's (`Console.language(for:…)`).
    let strings: ConsoleStrings
    var form = FormFields()

    var language: Language { strings.language }

    /// The text of `key` in the page's language, with `{name}` filled from `values`.
    func t(_ key: String, _ values: [String: String] = [:]) -> String {
        strings.format(key, values)
    }

    var services: ConsoleServices { console.services }
    var logger: Logger { context.logger }
    /// The client's address as `RequestScopeMiddleware` resolved it (`TRUSTED_PROXIES`), never the raw peer.
    var clientAddress: String { RequestScope.current.clientAddress }

    /// The signed-in caller; pages that reach this were declared `.signedIn` or `.role`.
    var caller: Principal {
        get throws {
            guard let principal else { throw AccountError.unauthenticated }
            return principal
        }
    }

    var query: FormFields { FormFields(urlEncoded: request.uri.query ?? "") }

    /// The page of a long list that `?name=` asks for; a cursor this server did not give out is the first page.
    /// The page of a list that starts at the cursor in `?name=`. A cursor the list did not give out (a link
    /// edited by hand) shows the first page, as a link without one would: a page, not an error, for a person.
    func listPage<Item: Sendable>(_ name: String = "cursor", _ list: (PageCursor?) async throws -> Page<Item>) async throws -> Page<Item> {
        guard let cursor = query[name].map(PageCursor.init(text:)) else { return try await list(nil) }
        do {
            return try await list(cursor)
        } catch is InvalidPageRequest {
            return try await list(nil)
        }
    }

    /// Sets `values[key]` to the link of the next (older) page when there is one. Only then: Mustache treats
    /// an empty string as true.
    static func addPageLink(_ path: String, parameter: String = "cursor", next: PageCursor?, as key: String, to values: inout [String: Any]) {
        guard let next else { return }
        values[key] = path + "?" + parameter + "=" + next.text
    }

    /// A path parameter as an id; a malformed one names nothing, so it is the caller's "not found".
    func id(_ name: String = "id", orElse notFound: any Error) throws -> UUID {
        guard let text = context.parameters.get(name), let id = UUID(uuidString: text) else { throw notFound }
        return id
    }

    // MARK: Pages

    /// Renders `template` inside the layout. `values` are the page's own; the layout adds the visitor's role,
    /// the CSRF token, the notice named by `?notice=` and, after a failed form, the problem and field errors.
    func page(
        _ template: String, title: String, status: HTTPResponse.Status = .ok, values: [String: Any] = [:],
        problem: Problem? = nil, fieldNames: [String: String] = [:]
    ) -> Response {
        var context = values
        context["title"] = title
        context["csrf"] = csrfToken
        context["signedIn"] = principal != nil
        context["isPerson"] = principal?.role == .user
        context["isCompany"] = principal?.role == .thirdParty
        context["isAuditor"] = principal?.role == .auditor
        context["t"] = strings.mustache
        context["lang"] = language.rawValue
        // The language switch: each language named in itself, linking to this page in it (`?lang=`).
        context["languages"] = Language.allCases.map {
            [
                "code": $0.rawValue, "name": $0.nativeName, "current": $0 == language,
                "link": Console.languageLink(path: request.uri.path, query: request.uri.query, $0),
            ] as [String: Any]
        }
        // Only a notice the catalog has (`notice.<key>`): a link can never put its own text on a page.
        if let key = query["notice"], Wording.noticeKeys.contains(key) {
            // A notice with a number (`{count}`) takes it from `?count=`; anything but a whole number shows none.
            let count = query["count"].flatMap { Int($0) }.map { strings.number($0) } ?? "—"
            context["notice"] = t("notice." + key, ["count": count])
        }
        let problem = problem?.localized(to: language)
        if let problem {
            // Field errors next to their field when the form has it, in the banner otherwise.
            var fieldErrors: [String: String] = [:]
            var otherErrors: [String] = []
            for error in problem.errors {
                if let field = fieldNames[error.field] ?? (fieldNames.values.contains(error.field) ? error.field : nil) {
                    fieldErrors[field] = fieldErrors[field].map { $0 + "; " + error.message } ?? error.message
                } else {
                    otherErrors.append("\(error.field) \(error.message)")
                }
            }
            context["problem"] =
                ["title": problem.title, "detail": problem.detail, "errors": otherErrors, "hasErrors": !otherErrors.isEmpty] as [String: Any]
            context["errors"] = fieldErrors
            if context["form"] == nil { context["form"] = form.echo() }
        }
        // `{{#selected.sex_female}}selected{{/selected.sex_female}}`: a choice the re-rendered form keeps.
        if let echoed = context["form"] as? [String: String] {
            context["selected"] = Dictionary(uniqueKeysWithValues: echoed.map { ("\($0.key)_\($0.value)", true) })
        }
        guard let html = console.templates.render(context, withTemplate: template) else {
            logger.error("console template missing", metadata: ["template": "\(template)"])
            return Response(status: .internalServerError)
        }
        // The problem's own headers too: Retry-After of a 429 or a 503.
        var headers = problem?.headers ?? [:]
        headers[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// An error page for a problem that no form can show next to a field.
    func errorPage(_ problem: Problem) -> Response {
        page("error", title: problem.localized(to: language).title, status: problem.status, problem: problem)
    }

    /// Runs a form's action; when the services refuse it, the same form again, with the problem's status, the
    /// message next to each field (`fieldNames` maps the API's field names to the form's) and what was typed.
    func submitting(
        _ template: String, title: String, values: @autoclosure () -> [String: Any] = [:], fieldNames: [String: String],
        _ action: () async throws -> Response
    ) async throws -> Response {
        do {
            return try await action()
        } catch {
            let problem = ProblemMiddleware.problem(for: error, logger: logger)
            guard problem.slug != "unauthenticated" else { throw error }
            return page(template, title: title, status: problem.status, values: values(), problem: problem, fieldNames: fieldNames)
        }
    }

    /// `fieldNames` for a form whose fields are named as the API's.
    static func sameNames(_ fields: String...) -> [String: String] {
        Dictionary(uniqueKeysWithValues: fields.map { ($0, $0) })
    }

    /// 303 to a page that shows what happened, so a reload never repeats the action.
    func redirect(_ path: String, notice: String? = nil) -> Response {
        .redirect(to: notice.map { path + (path.contains("?") ? "&" : "?") + "notice=" + $0 } ?? path, type: .normal)
    }
}
