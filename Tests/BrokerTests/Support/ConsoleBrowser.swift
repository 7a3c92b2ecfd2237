import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// A minimal browser for the console's pages in tests: keeps the cookies the server sets, and sends a form
/// with the CSRF token of the last page it loaded (the way a real browser submits a rendered form).
final class ConsoleBrowser: @unchecked Sendable {
    let harness: TestHarness
    private(set) var cookies: [String: String] = [:]
    private(set) var lastPage = ""

    init(_ harness: TestHarness) { self.harness = harness }

    var csrfToken: String? {
        guard let range = lastPage.range(of: #"name="_csrf" value=""#) else { return nil }
        return String(lastPage[range.upperBound...].prefix { $0 != "\"" })
    }

    @discardableResult
    func get(_ path: String) async throws -> TestResponse {
        let response = try await send(.get, path, body: nil, headers: [:])
        lastPage = String(buffer: response.body)
        return response
    }

    /// A form post; `csrf: .fromPage` adds the last page's token, `.none` leaves it out, `.value` sends that one.
    @discardableResult
    func post(_ path: String, _ fields: [(String, String)], csrf: CSRF = .fromPage) async throws -> TestResponse {
        var fields = fields
        switch csrf {
        case .fromPage: if let token = csrfToken { fields.append(("_csrf", token)) }
        case .value(let token): fields.append(("_csrf", token))
        case .none: break
        }
        let body = fields.map { "\(Self.encode($0.0))=\(Self.encode($0.1))" }.joined(separator: "&")
        let response = try await send(
            .post, path, body: ByteBuffer(string: body), headers: [.contentType: "application/x-www-form-urlencoded"])
        lastPage = String(buffer: response.body)
        return response
    }

    enum CSRF {
        case fromPage, none
        case value(String)
    }

    func send(_ method: HTTPRequest.Method, _ path: String, body: ByteBuffer?, headers extra: HTTPFields) async throws -> TestResponse {
        var headers = extra
        if !cookies.isEmpty { headers[.cookie] = cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
        let response = try await harness.client.execute(uri: path, method: method, headers: headers, body: body)
        for line in response.headers[values: .setCookie] {
            let pair = line.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
            let name = String(pair[0])
            let value = pair.count > 1 ? String(pair[1]) : ""
            if value.isEmpty || line.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = value }
        }
        return response
    }

    /// Signs in; an account with a second factor is asked for its code, which this computes from the key in
    /// the database (`TestHarness.currentCode`), as the holder's app would.
    func logIn(_ email: String, _ password: String) async throws -> TestResponse {
        try await get("/login")
        let response = try await post("/login", [("email", email), ("password", password)])
        guard response.headers[.location] == "/login/second-factor" else { return response }
        try await get("/login/second-factor")
        return try await post("/login/second-factor", [("code", try await harness.currentCode(email: email))])
    }

    /// The person of `parties`, signed in, on their inbox.
    static func person(_ harness: TestHarness, _ parties: RequestParties) async throws -> ConsoleBrowser {
        let browser = ConsoleBrowser(harness)
        _ = try await browser.logIn(parties.personEmail, TestHarness.Person().password)
        try await browser.get("/inbox")
        return browser
    }

    /// The company of `parties`, signed in (its email is read back from the API: `RequestParties` keeps the token only).
    static func company(_ harness: TestHarness, _ parties: RequestParties) async throws -> ConsoleBrowser {
        let me = try await harness.request(.get, "/v1/me", token: parties.company)
        let email = try #require(try harness.object(me)["email"] as? String)
        let browser = ConsoleBrowser(harness)
        _ = try await browser.logIn(email, TestHarness.Company().password)
        return browser
    }

    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-._~"))) ?? text
    }
}
