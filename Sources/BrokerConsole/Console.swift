import BrokerDomain
import BrokerHTTP
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Mustache
import NIOCore
import OpenAPIRuntime

/// The web console: server-rendered pages for people, companies and auditors, served next to the API by
/// the same process. Every action goes through the API's own services (`services.accounts`,
/// `services.singleRequests`, …) and every upload, import and download through the same budgeted operations
/// as the API's (`services.budgeted`), so the console cannot drift from the API's rules.
/// Routes live in the `Console+<area>.swift` files; this file holds what every page shares.
package struct Console: Sendable {
    let services: ConsoleServices
    let templates: MustacheLibrary
    let assets: ConsoleAssets
    /// `Secure` on the cookies: this server terminates TLS, or `PUBLIC_URL` is https (a TLS proxy in front).
    let servesTLS: Bool
    /// A session cookie lives as long as the session it carries.
    let sessionTTL: Int

    static let sessionCookie = "d4h_session"
    static let visitorCookie = "d4h_csrf"
    /// A visitor's chosen language (`?lang=`), kept for a year; a signed-in account's is its profile's.
    static let languageCookie = "d4h_lang"
    static let csrfField = "_csrf"
    static let csrfHeader = HTTPField.Name("X-CSRF-Token")!
    /// Inline styles and scripts are refused: everything comes from /console.css and /console.js.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    /// Forms are small; only the upload endpoint reads a larger body, and it does so itself.
    static let formBodyLimit = 1024 * 1024
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!

    /// A request's body as the API's operations take it, read once as it arrives.
    static func httpBody(_ body: RequestBody) -> HTTPBody {
        HTTPBody(body.map { ArraySlice($0.readableBytesView) }, length: .unknown, iterationBehavior: .single)
    }

    /// The whole body, or the API's 413 when it is over `limit`.
    static func collect(_ body: RequestBody, upTo limit: Int) async throws -> ByteBuffer {
        do {
            return try await body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw BodyTooLarge(maxBytes: limit)
        }
    }

    package static func load(_ services: ConsoleServices, servesTLS: Bool, publicURL: String, sessionTTL: Int) async throws -> Console {
        guard let templates = Bundle.module.url(forResource: "Templates", withExtension: nil),
            let assets = Bundle.module.url(forResource: "Assets", withExtension: nil)
        else { throw ConsoleResourcesMissing() }
        // The catalogs are read once per process; a build without them would render every key as its marker.
        guard ConsoleCatalog.shared.texts.count == Language.allCases.count else { throw ConsoleResourcesMissing() }
        return Console(
            services: services, templates: try await MustacheLibrary(directory: templates.path), assets: try ConsoleAssets(directory: assets),
            servesTLS: servesTLS || publicURL.lowercased().hasPrefix("https:"),
            sessionTTL: sessionTTL)
    }

    package func register(on router: Router<BrokerRequestContext>) {
        assets.register(on: router)
        registerAccountPages(on: router)
        registerPasswordResetPages(on: router)
        registerSecondFactorPages(on: router)
        registerPersonPages(on: router)
        registerCorrectionPages(on: router)
        registerSharingPages(on: router)
        registerNotificationPages(on: router)
        registerCompanyPages(on: router)
        registerReceiptPages(on: router)
        registerAuditorPages(on: router)
        registerRunPages(on: router)
        registerRunActions(on: router)
    }

    // MARK: Routing

    /// Who may open a page.
    enum Access: Sendable, Equatable {
        case anyone
        case signedIn
        case role(Role)
    }

    /// How a POST proves it comes from one of our own pages.
    enum PostBody: Sendable {
        /// A form: the token is its `_csrf` field.
        case form
        /// A raw upload (script): the token is the `X-CSRF-Token` header and the handler reads the body.
        case upload
        /// A one-click unsubscribe (RFC 8058): a mail client posts `List-Unsubscribe=One-Click` from no page
        /// of ours, so there is no CSRF token; the secret token in the path is the credential, and what it
        /// can do is only to turn one kind of mail off for one account.
        case oneClick
    }

    typealias Handler = @Sendable (ConsoleRequest) async throws -> Response

    func get(_ path: RouterPath, _ access: Access, on router: Router<BrokerRequestContext>, _ handler: @escaping Handler) {
        router.get(path) { request, context in
            try await self.serve(request, context: context, access: access, post: nil, handler: handler)
        }
        // HEAD is GET without the body (RFC 9110 §9.3.2), framed as the GET's: its length when known, chunked for
        // a stream. The body is never read, so a download's HEAD releases nothing. Every GET here is a page or a
        // download; what changes anything is a POST.
        router.head(path) { request, context in
            var response = try await self.serve(request, context: context, access: access, post: nil, handler: handler)
            response.body = ResponseBody(contentLength: response.body.contentLength) { writer in try await writer.finish(nil) }
            return response
        }
    }

    func post(
        _ path: RouterPath, _ access: Access, body: PostBody = .form, on router: Router<BrokerRequestContext>,
        _ handler: @escaping Handler
    ) {
        router.post(path) { request, context in
            try await self.serve(request, context: context, access: access, post: body, handler: handler)
        }
    }

    /// A button on one single request (accept, refuse, cancel, stop): the service's own transition, then back
    /// to the list with a notice. A malformed id names nothing: the service's "not found".
    func singleRequestAction(
        _ path: RouterPath, _ role: Role, on router: Router<BrokerRequestContext>, then list: String, notice: String,
        _ transition: @escaping @Sendable (SingleRequestService, UUID, Principal, Logger) async throws -> SingleRequest
    ) {
        post(path, .role(role), on: router) { request in
            _ = try await transition(
                request.services.singleRequests, try request.id(orElse: SingleRequestError.notFound), try request.caller, request.logger)
            return request.redirect(list, notice: notice)
        }
    }

    /// Resolves the visitor, checks access and (for a POST) the CSRF token, runs the page, and adds the
    /// page headers. Errors become an HTML page with the problem's status, title and detail.
    private func serve(
        _ request: Request, context: BrokerRequestContext, access: Access, post: PostBody?, handler: Handler
    ) async throws -> Response {
        let logger = context.logger
        let visitor = try await Visitor.resolve(request.cookies, accounts: services.accounts, logger: logger)
        let csrfToken = try await services.csrf.token(for: visitor.binding, logger: logger)
        let chosen = FormFields(urlEncoded: request.uri.query ?? "")["lang"].flatMap(Language.init(tag:))
        let language = try await pageLanguage(request, principal: visitor.principal, chosen: chosen, logger: logger)
        let strings = ConsoleCatalog.shared.strings(for: language)
        var consoleRequest = ConsoleRequest(
            console: self, request: request, context: context, principal: visitor.principal,
            csrfToken: csrfToken, strings: strings)
        var response: Response
        do {
            response = try await ConsoleStrings.$current.withValue(strings) {
                try await authorised(&consoleRequest, access: access, post: post, visitor: visitor, handler: handler)
            }
        } catch {
            // The upload script reads problem+json, which ProblemMiddleware writes; a person reads a page.
            // In the page's language (the account's), which the browser's `Accept-Language` may not be.
            if case .upload = post { throw ProblemMiddleware.problem(for: error, logger: logger).localized(to: language) }
            // Domain errors (also when wrapped by a transaction), a database outage, bad input PostgreSQL
            // refused: the API's own mapping, so a page says what the API would.
            let problem = ProblemMiddleware.problem(for: error, logger: logger)
            // A session that expired (or was revoked) while the page was open: sign in again.
            response = problem.slug == "unauthenticated" ? .redirect(to: "/login", type: .normal) : consoleRequest.errorPage(problem)
        }
        response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        if let fresh = visitor.newVisitorCookie {
            response.setCookie(cookie(Self.visitorCookie, fresh, maxAge: nil))
        }
        if let chosen, visitor.principal == nil {
            response.setCookie(cookie(Self.languageCookie, chosen.rawValue, maxAge: 365 * 24 * 3600))
        }
        // The same URL answers in another language for another visitor: no shared cache may mix them. A
        // download also names what it varies on (`Accept-Encoding`: `Download.encoded`), kept here.
        let varies = response.headers[values: .vary].filter { !$0.isEmpty }
        response.headers[.vary] = (["Accept-Language", "Cookie"] + varies).joined(separator: ", ")
        response.headers[.contentLanguage] = language.rawValue
        return response
    }

    /// The language of the page: a signed-in account's own (its profile); a visitor's `?lang=`, else the one
    /// they chose before (`d4h_lang`), else their browser's `Accept-Language`, else English.
    private func pageLanguage(_ request: Request, principal: Principal?, chosen: Language?, logger: Logger) async throws -> Language {
        if let principal { return try await services.accounts.language(of: principal, logger: logger) }
        if let chosen { return chosen }
        if let kept = request.cookies[Self.languageCookie].flatMap({ Language(rawValue: $0.value) }) { return kept }
        return Language(acceptLanguage: request.headers[.acceptLanguage])
    }

    /// This page in `language`: its path and query with `lang` set (a visitor's language switch).
    static func languageLink(path: String, query: String?, _ language: Language) -> String {
        let others = (query ?? "").split(separator: "&").filter { !$0.hasPrefix("lang=") && !$0.hasPrefix("notice=") }
        return path + "?" + (others + ["lang=\(language.rawValue)"]).joined(separator: "&")
    }

    private func authorised(
        _ request: inout ConsoleRequest, access: Access, post: PostBody?, visitor: Visitor, handler: Handler
    ) async throws -> Response {
        switch access {
        case .anyone: break
        case .signedIn, .role:
            guard let principal = request.principal else {
                // The upload script cannot follow a redirect to a sign-in page; it shows the 401's detail.
                if case .upload = post { throw AccountError.unauthenticated }
                return .redirect(to: "/login", type: .normal)
            }
            // An auditor without a second factor is led to enrolling it, whatever page they open.
            if principal.mustEnrolSecondFactor, !Self.enrolmentPaths.contains(request.request.uri.path) {
                if case .upload = post { throw SecondFactorError.enrolmentRequired }
                return request.redirect(Self.secondFactorPage, notice: "second-factor-required")
            }
            if case .role(let role) = access, principal.role != role {
                return request.errorPage(
                    Problem(
                        status: .forbidden, slug: "wrong-role", title: "Not for your account",
                        detail: "This page is for \(Wording.roleNamePlural(role)); you are signed in as \(Wording.roleName(principal.role))."))
            }
        }
        if case .oneClick = post {
            let body = try await Self.collect(request.request.body, upTo: Self.formBodyLimit)
            request.form = FormFields(urlEncoded: String(buffer: body))
        } else if let post {
            let submitted: String?
            switch post {
            case .form:
                let body = try await Self.collect(request.request.body, upTo: Self.formBodyLimit)
                request.form = FormFields(urlEncoded: String(buffer: body))
                submitted = request.form.raw(Self.csrfField)
            case .upload:
                submitted = request.request.headers[Self.csrfHeader]
            case .oneClick:
                submitted = nil
            }
            // A visitor who arrives without the cookie cannot have been shown a form bound to it; and a browser
            // that says the request comes from another site (Fetch Metadata) is not posting one of our forms.
            let site = request.request.headers[Self.secFetchSite]
            guard visitor.newVisitorCookie == nil, site == nil || site == "same-origin" || site == "none",
                try await services.csrf.accepts(submitted, for: visitor.binding, logger: request.logger)
            else {
                request.logger.notice("console form refused: missing or wrong CSRF token", metadata: ["http.path": "\(request.request.uri.path)"])
                throw Problem(
                    status: .forbidden, slug: "csrf-token-invalid", title: "This form has expired",
                    detail: "The form was not sent from one of our pages, or you signed in or out since it was shown. Reload the page and try again.")
            }
        }
        return try await handler(request)
    }

    func cookie(_ name: String, _ value: String, maxAge: Int?) -> Cookie {
        Self.cookie(name, value, maxAge: maxAge, secure: servesTLS)
    }

    /// Every console cookie: unreadable by scripts, never sent by another site's request, `Secure` under TLS.
    static func cookie(_ name: String, _ value: String, maxAge: Int?, secure: Bool) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: "/", secure: secure, httpOnly: true, sameSite: .strict)
    }
}
