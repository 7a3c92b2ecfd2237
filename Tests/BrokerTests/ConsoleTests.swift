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

/// The web console's sessions, CSRF defence and role walls, over real HTTP and PostgreSQL. The browser tests
/// (`scripts/browser-tests.sh`) drive the same pages through Chromium; these pin the security rules exactly.
@Suite("Web console", .serialized)
struct ConsoleTests {
    static let personPassword = TestHarness.Person().password

    @Test("a form post without the CSRF token, or with another session's, is refused with 403 and changes nothing")
    func csrf() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let id = try await harness.sentRequestID(parties)
            let person = ConsoleBrowser(harness)
            #expect(try await person.logIn(parties.personEmail, Self.personPassword).status == .seeOther)
            try await person.get("/inbox")
            #expect(person.lastPage.contains(#"data-request-id="\#(id)""#))

            // Another visitor's valid token (bound to their own session) is as good as none.
            let other = ConsoleBrowser(harness)
            try await other.get("/login")
            let foreign = try #require(other.csrfToken)
            for csrf in [ConsoleBrowser.CSRF.none, .value(foreign), .value("")] {
                let refused = try await person.post("/requests/\(id)/accept", [], csrf: csrf)
                #expect(refused.status == .forbidden)
                #expect(person.lastPage.contains("This form has expired"))
            }
            let still = try await harness.request(.get, "/v1/single-requests/\(id)", token: parties.person)
            #expect(try harness.object(still)["status"] as? String == "pending")

            try await person.get("/inbox")
            let accepted = try await person.post("/requests/\(id)/accept", [])
            #expect(accepted.status == .seeOther)
            #expect(accepted.headers[.location] == "/inbox?notice=accepted")
            let now = try await harness.request(.get, "/v1/single-requests/\(id)", token: parties.person)
            #expect(try harness.object(now)["status"] as? String == "accepted")
        }
    }

    /// A person's two heart rates, a request of the company's that the person accepted, and the company signed in
    /// to the console.
    static func companySignedIn(_ harness: TestHarness) async throws -> (parties: RequestParties, id: String, company: ConsoleBrowser) {
        let parties = try await harness.requestParties()
        try await harness.uploadHeartRates([TestHarness.time(minutes: 0), TestHarness.time(minutes: 1)], token: parties.person)
        let id = try await harness.acceptedRequestID(parties)
        let companyEmail = try #require(try harness.object(try await harness.request(.get, "/v1/me", token: parties.company))["email"] as? String)
        let company = ConsoleBrowser(harness)
        #expect(try await company.logIn(companyEmail, TestHarness.Company().password).status == .seeOther)
        return (parties, id, company)
    }

    @Test("HEAD on the console's pages and downloads answers as the GET would, without the body, and releases nothing")
    func headOfPages() async throws {
        try await TestHarness.run { harness in
            let port = try #require(harness.client.port)
            let (parties, id, company) = try await Self.companySignedIn(harness)
            let cookie = company.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")

            // A page anyone may open: its GET's length, and no byte of it (it was a 404).
            let login = try await harness.request(.get, "/login")
            let loginHead = try await HTTPErrorTests.rawHead(port: port, path: "/login")
            #expect(loginHead.head.hasPrefix("HTTP/1.1 200"), "\(loginHead.head)")
            #expect(HTTPErrorTests.header("content-length", in: loginHead.head) == String(login.body.readableBytes), "\(loginHead.head)")
            #expect(loginHead.bodyBytes == 0)
            let style = try await HTTPErrorTests.rawHead(port: port, path: "/console.css")
            #expect(style.head.hasPrefix("HTTP/1.1 200") && style.bodyBytes == 0, "\(style.head)")
            #expect(
                HTTPErrorTests.header("content-length", in: style.head)
                    == String((try await harness.request(.get, "/console.css")).body.readableBytes))
            // Access is checked as for the GET.
            #expect(try await HTTPErrorTests.rawHead(port: port, path: "/company").head.hasPrefix("HTTP/1.1 303"))

            // A download: chunked as its GET, and not recorded as a release in the person's access log.
            let accessLog = { try await harness.object(harness.request(.get, "/v1/me/access-log", token: parties.person))["items"] as? [Any] }
            let logged = try await accessLog()?.count
            let csv = try await HTTPErrorTests.rawHead(port: port, path: "/company/requests/\(id)/data.csv", cookie: cookie)
            #expect(csv.head.hasPrefix("HTTP/1.1 200"), "\(csv.head)")
            #expect(HTTPErrorTests.header("content-type", in: csv.head) == "text/csv; charset=utf-8")
            #expect(HTTPErrorTests.header("content-length", in: csv.head) == nil, "\(csv.head)")
            #expect(HTTPErrorTests.header("transfer-encoding", in: csv.head) == "chunked", "\(csv.head)")
            #expect(csv.bodyBytes == 0)
            #expect(try await accessLog()?.count == logged)
        }
    }

    @Test("the console's CSV download and export are the API's, on the same download budget")
    func downloadsAreTheAPIs() async throws {
        // A clock that stands still: on a loaded machine a real one refills the budget mid-test.
        try await TestHarness.run(configure: RateLimitFixtures.configure(ManualClock(), [.downloads: .perMinute(4)])) { harness in
            let (parties, id, company) = try await Self.companySignedIn(harness)

            let console = try await company.send(.get, "/company/requests/\(id)/data.csv", body: nil, headers: [:])  // 1
            #expect(console.status == .ok)
            #expect(console.headers[.contentType] == "text/csv; charset=utf-8")
            let api = try await harness.request(.get, "/v1/single-requests/\(id)/data?format=csv", token: parties.company)  // 2
            #expect(harness.text(console) == harness.text(api))
            #expect(harness.text(console).split(whereSeparator: \.isNewline).count == 3, "a header and the two samples: \(harness.text(console))")

            let person = ConsoleBrowser(harness)
            #expect(try await person.logIn(parties.personEmail, Self.personPassword).status == .seeOther)
            let export = try await person.send(.get, "/export", body: nil, headers: [:])
            #expect(export.status == .ok)
            #expect(export.headers[.contentDisposition]?.contains("data4help-export.json") == true)
            let samples = try #require(try harness.object(export)["samples"] as? [[String: Any]])
            #expect(samples.count == 2)

            // The company's budget of four: two spent above, one more each way, then both are refused.
            #expect(try await company.send(.get, "/company/requests/\(id)/data.csv", body: nil, headers: [:]).status == .ok)  // 3
            #expect(try await harness.request(.get, "/v1/single-requests/\(id)/data", token: parties.company).status == .ok)  // 4
            #expect(try await company.send(.get, "/company/requests/\(id)/data.csv", body: nil, headers: [:]).status == .tooManyRequests)
            #expect(try await harness.request(.get, "/v1/single-requests/\(id)/data", token: parties.company).status == .tooManyRequests)
        }
    }

    @Test("the auditor's console CSV of the log is the API's, on the same download budget; a person gets no log")
    func auditorDownloadsAreTheAPIs() async throws {
        try await TestHarness.run(configure: RateLimitFixtures.configure(ManualClock(), [.downloads: .perMinute(3)])) { harness in
            let parties = try await harness.requestParties()
            _ = try await harness.acceptedRequestID(parties)
            let token = try await harness.activeAuditor()
            let email = try #require(try await harness.sql("SELECT email FROM accounts WHERE role = 'auditor'").first?.decode(String.self))
            let auditor = ConsoleBrowser(harness)
            #expect(try await auditor.logIn(email, "auditor-password-1").status == .seeOther)

            let console = try await auditor.send(.get, "/audit/events.csv", body: nil, headers: [:])  // 1
            #expect(console.status == .ok)
            #expect(console.headers[.contentDisposition] == #"attachment; filename="audit-events.csv""#)
            let api = try await harness.request(.get, "/v1/audit/events?format=csv", token: token)  // 2
            #expect(harness.text(console) == harness.text(api))
            #expect(harness.text(console).contains("single_request.accepted"), "\(harness.text(console))")

            // Three in the budget: one more from the console, then both fronts are refused.
            #expect(try await auditor.send(.get, "/audit/events.csv", body: nil, headers: [:]).status == .ok)  // 3
            #expect(try await auditor.send(.get, "/audit/events.csv", body: nil, headers: [:]).status == .tooManyRequests)
            #expect(try await harness.request(.get, "/v1/audit/events?format=csv", token: token).status == .tooManyRequests)

            // The page's role gate: a person gets no log.
            let person = ConsoleBrowser(harness)
            #expect(try await person.logIn(parties.personEmail, Self.personPassword).status == .seeOther)
            #expect(try await person.send(.get, "/audit/events.csv", body: nil, headers: [:]).status != .ok)
        }
    }

    @Test("the page of charts is one statistics request, on the API's statistics budget")
    func chartsShareTheStatisticsBudget() async throws {
        try await TestHarness.run(configure: RateLimitFixtures.configure(ManualClock(), [.statistics: .perMinute(3)])) { harness in
            let parties = try await harness.requestParties()
            try await harness.uploadHeartRates([Timestamp.rfc3339(Date().addingTimeInterval(-3600))], token: parties.person)
            let person = ConsoleBrowser(harness)
            #expect(try await person.logIn(parties.personEmail, Self.personPassword).status == .seeOther)
            #expect(try await person.get("/data").status == .ok)  // 1
            #expect(person.lastPage.contains("Heart rate"), "the chart is drawn")
            #expect(try await harness.request(.get, "/v1/me/statistics?type=heart_rate", token: parties.person).status == .ok)  // 2
            #expect(try await person.send(.get, "/data", body: nil, headers: [:]).status == .ok)  // 3
            #expect(try await person.send(.get, "/data", body: nil, headers: [:]).status == .tooManyRequests)
            try RateLimitFixtures.expectRateLimited(
                try await harness.request(.get, "/v1/me/statistics?type=heart_rate", token: parties.person), harness)
        }
    }

    @Test("the session cookie is HttpOnly and SameSite=Strict; signing out revokes the session itself")
    func sessionCookie() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let browser = ConsoleBrowser(harness)
            let login = try await browser.logIn(parties.personEmail, Self.personPassword)
            let setCookie = try #require(login.headers[values: .setCookie].first { $0.hasPrefix("d4h_session=") })
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Path=/"))
            #expect(!setCookie.contains("Secure"), "plain HTTP: a Secure cookie would never come back")
            #expect(Console.cookie("d4h_session", "x", maxAge: 60, secure: true).description.contains("Secure"))
            let token = try #require(browser.cookies["d4h_session"])

            try await browser.get("/inbox")
            #expect(try await browser.post("/logout", []).headers[.location] == "/login?notice=signed-out")
            #expect(browser.cookies["d4h_session"] == nil)
            // The old value, replayed, is no session any more: not for the console, not for the API.
            let replay = ConsoleBrowser(harness)
            let page = try await replay.send(.get, "/inbox", body: nil, headers: [.cookie: "d4h_session=\(token)"])
            #expect(page.status == .seeOther && page.headers[.location] == "/login")
            #expect(try await harness.request(.get, "/v1/me", token: token).status == .unauthorized)
        }
    }

    @Test("the cookie never authenticates the API, and an API key in the cookie is not a console session")
    func cookieIsNotABearer() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let browser = ConsoleBrowser(harness)
            _ = try await browser.logIn(parties.personEmail, Self.personPassword)
            let session = try #require(browser.cookies["d4h_session"])
            let api = try await harness.request(.get, "/v1/me", headers: [.cookie: "d4h_session=\(session)"])
            #expect(api.status == .unauthorized)

            let created = try await harness.request(.post, "/v1/api-keys", json: #"{"name":"ci"}"#, token: parties.company)
            let key = try #require(try harness.object(created)["secret"] as? String)
            let withKey = try await ConsoleBrowser(harness).send(.get, "/company", body: nil, headers: [.cookie: "d4h_session=\(key)"])
            #expect(withKey.status == .seeOther && withKey.headers[.location] == "/login")
        }
    }

    @Test("pages send the page CSP and no-store; another role's page is 403; without a session, /login")
    func pagesAndRoles() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let anonymous = try await ConsoleBrowser(harness).get("/inbox")
            #expect(anonymous.status == .seeOther && anonymous.headers[.location] == "/login")

            let browser = ConsoleBrowser(harness)
            _ = try await browser.logIn(parties.personEmail, Self.personPassword)
            for path in ["/inbox", "/data", "/access-log", "/blocks", "/account", "/account/password", "/account/delete"] {
                let page = try await browser.get(path)
                #expect(page.status == .ok, "\(path)")
                #expect(page.headers[.contentSecurityPolicy] == Console.contentSecurityPolicy, "\(path)")
                #expect(page.headers[.cacheControl] == "no-store", "\(path)")
                #expect(!browser.lastPage.contains("<script>"), "\(path): inline scripts are refused by the CSP")
            }
            for path in ["/company", "/company/settings", "/audit", "/audit/events"] {
                #expect(try await browser.get(path).status == .forbidden, "\(path)")
            }
            // A malformed id names nothing: a 404 page (someone else's request: `errorsArePages`).
            try await browser.get("/inbox")
            #expect(try await browser.post("/requests/not-a-uuid/accept", []).status == .notFound)
        }
    }

    @Test("a person sets their time zone on the account page; a bad one is named next to the field and changes nothing")
    func timeZoneForm() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let browser = try await ConsoleBrowser.person(harness, parties)
            try await browser.get("/account")
            #expect(browser.lastPage.contains("Not set: days are UTC days"))
            let bad = try await browser.post("/account/time-zone", [("timeZone", "Europe/Atlantis")])
            #expect(bad.status == .unprocessableContent)
            #expect(browser.lastPage.contains(#"id="timeZone-error""#))
            #expect(try await harness.int("SELECT count(*) FROM users WHERE time_zone IS NOT NULL") == 0)
            try await browser.get("/account")
            let good = try await browser.post("/account/time-zone", [("timeZone", "Europe/Rome")])
            #expect(good.status == .seeOther || good.status == .found)
            try await browser.get("/account")
            #expect(browser.lastPage.contains(#"<dd id="time-zone">Europe/Rome</dd>"#))
            let me = try harness.object(try await harness.request(.get, "/v1/me", token: parties.person))
            #expect(me["timeZone"] as? String == "Europe/Rome")
        }
    }

    @Test("an invalid registration re-renders the form with 422, the error next to its field, the password not echoed")
    func invalidForm() async throws {
        try await TestHarness.run { harness in
            let browser = ConsoleBrowser(harness)
            try await browser.get("/register/person")
            let response = try await browser.post(
                "/register/person",
                [
                    ("fullName", "Laura Bianchi"), ("email", "laura@example.com"), ("password", "correct-horse-battery"),
                    ("fiscalCode", "NOTAFISCALCODE00"), ("birthDate", "1990-01-01"), ("sex", "F"),
                ])
            #expect(response.status == .unprocessableContent)
            #expect(browser.lastPage.contains(#"id="fiscalCode-error""#))
            #expect(browser.lastPage.contains(#"value="laura@example.com""#))
            #expect(!browser.lastPage.contains("correct-horse-battery"))
            #expect(try await harness.mails().isEmpty, "nothing registered")
        }
    }

    @Test("an upload through the console takes the CSRF header and the API's validation; problems come back as problem+json")
    func upload() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let browser = ConsoleBrowser(harness)
            _ = try await browser.logIn(parties.personEmail, Self.personPassword)
            try await browser.get("/data")
            let token = try #require(
                browser.lastPage.range(of: #"data-csrf=""#).map {
                    String(browser.lastPage[$0.upperBound...].prefix { $0 != "\"" })
                })
            let csv = "type,value,at\nheart_rate,71,2026-03-01T08:00:00Z\nheart_rate,74,2026-03-01T09:00:00Z\n"
            let withoutToken = try await browser.send(.post, "/data/upload?kind=csv", body: ByteBuffer(string: csv), headers: [:])
            #expect(withoutToken.status == .forbidden)
            let stored = try await browser.send(
                .post, "/data/upload?kind=csv", body: ByteBuffer(string: csv), headers: [Console.csrfHeader: token])
            #expect(stored.status == .ok)
            #expect(try harness.object(stored)["accepted"] as? Int == 2)
            let invalid = try await browser.send(
                .post, "/data/upload?kind=csv", body: ByteBuffer(string: "type,value,at\nheart_rate,9999,2026-03-01T10:00:00Z\n"),
                headers: [Console.csrfHeader: token])
            #expect(invalid.status == .unprocessableContent)
            #expect(invalid.headers[.contentType]?.hasPrefix("application/problem+json") == true)
            let listed = try await harness.request(.get, "/v1/me/samples", token: parties.person)
            #expect((try harness.object(listed)["items"] as? [Any])?.count == 2)

            // My data draws a chart for each type with readings in the last 30 days, and only for those.
            let recent = "type,value,at\nheart_rate,68,\(Timestamp.rfc3339(Date().addingTimeInterval(-60)))\n"
            #expect(
                try await browser.send(
                    .post, "/data/upload?kind=csv", body: ByteBuffer(string: recent), headers: [Console.csrfHeader: token]
                ).status == .ok)
            try await browser.get("/data")
            #expect(browser.lastPage.contains(#"data-type="heart_rate""#))
            #expect(!browser.lastPage.contains(#"data-type="step_count""#))
            #expect(browser.lastPage.contains("<svg"))
        }
    }

    @Test("a failed action is a page, not JSON: accepting twice is 409, someone else's request 404, input PostgreSQL refuses 422")
    func errorsArePages() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let id = try await harness.sentRequestID(parties)
            let person = try await ConsoleBrowser.person(harness, parties)
            let token = try #require(person.csrfToken)
            #expect(try await person.post("/requests/\(id)/accept", []).status == .seeOther)
            // The same form sent again (a second tab, a double click): the token is still good, the action is not.
            let twice = try await person.post("/requests/\(id)/accept", [], csrf: .value(token))
            #expect(twice.status == .conflict)
            #expect(twice.headers[.contentType] == "text/html; charset=utf-8")
            #expect(person.lastPage.contains(#"id="error""#))

            let stranger = try await harness.requestParties(companyName: "Other S.p.A.")
            let theirs = try await harness.sentRequestID(stranger)
            try await person.get("/inbox")
            let notYours = try await person.post("/requests/\(theirs)/refuse", [])
            #expect(notYours.status == .notFound && notYours.headers[.contentType] == "text/html; charset=utf-8")

            let company = try await ConsoleBrowser.company(harness, parties)
            try await company.get("/company/requests/new")
            let nul = try await company.post(
                "/company/requests/new",
                [
                    ("subjectEmail", parties.personEmail), ("types", "heart_rate"), ("purpose", "a\u{0}b"),
                ])
            #expect(nul.status == .unprocessableContent)
            #expect(company.lastPage.contains(#"id="single-request-form""#), "the form again, with what was typed")
        }
    }

    @Test("a form posted from another site (Fetch Metadata) is refused even with a valid token; an upload without a session is a 401 for the script")
    func crossSiteAndExpiredUpload() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let id = try await harness.sentRequestID(parties)
            let person = try await ConsoleBrowser.person(harness, parties)
            let token = try #require(person.csrfToken)
            let body = ByteBuffer(string: "_csrf=\(ConsoleBrowser.encode(token))")
            let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
            var crossSite = form
            crossSite[Console.secFetchSite] = "cross-site"
            #expect(try await person.send(.post, "/requests/\(id)/accept", body: body, headers: crossSite).status == .forbidden)
            var sameOrigin = form
            sameOrigin[Console.secFetchSite] = "same-origin"
            #expect(try await person.send(.post, "/requests/\(id)/accept", body: body, headers: sameOrigin).status == .seeOther)

            let anonymous = ConsoleBrowser(harness)
            let upload = try await anonymous.send(
                .post, "/data/upload?kind=csv", body: ByteBuffer(string: "type,value,at\n"), headers: [Console.csrfHeader: "x"])
            #expect(upload.status == .unauthorized)
            #expect(upload.headers[.contentType]?.hasPrefix("application/problem+json") == true)
        }
    }

    @Test("group request form: bounds without a type are an error on that row; a later row's error stays on its row; a huge bound renders")
    func groupRequestRows() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let company = try await ConsoleBrowser.company(harness, parties)
            let common = [
                ("purpose", "Study"), ("purposeCode", "HRESCH"), ("types", "heart_rate"), ("windowFrom", "2026-03-01"), ("windowTo", "2026-03-02"),
                ("bucket", "day"),
            ]
            try await company.get("/company/group-requests/new")
            let untyped = try await company.post("/company/group-requests/new", common + [("filterMin1", "60"), ("ageMin", "20")])
            #expect(untyped.status == .unprocessableContent)
            #expect(company.lastPage.contains(#"id="filterType1-error""#))

            // Row 1 left empty: the API's filters[0] is row 2, and its error is shown there.
            try await company.get("/company/group-requests/new")
            let inverted = try await company.post(
                "/company/group-requests/new", common + [("filterType2", "heart_rate"), ("filterMin2", "90"), ("filterMax2", "60")])
            #expect(inverted.status == .unprocessableContent)
            #expect(company.lastPage.contains(#"id="filterMin2-error""#))
            #expect(!company.lastPage.contains(#"id="filterMin1-error""#))

            // Stored (refused: nobody matches), then listed: a bound of 1e19 must print, not trap.
            let huge =
                #"{"types":["heart_rate"],"filters":[{"type":"heart_rate","min":1e19}],"window":{"from":"2026-03-01","to":"2026-03-02"},"bucket":"day","purposeCode":"HRESCH","purpose":"Huge"}"#
            #expect(try await harness.request(.post, "/v1/group-requests", json: huge, token: parties.company).status == .created)
            #expect(try await company.get("/company").status == .ok)
            #expect(company.lastPage.contains("10000000000000000000"))
            #expect(HealthChart.number(1e300).hasPrefix("1000"))
            #expect(HealthChart.number(71.25) == "71.2" || HealthChart.number(71.25) == "71.3")
            #expect(HealthChart.number(72) == "72")
        }
    }

    @Test("long lists are paged: 100 rows, then a link to the older ones")
    func paging() async throws {
        try await TestHarness.run(configure: { $0.rateLimits = .unlimited }) { harness in
            let parties = try await harness.requestParties()
            let body =
                #"{"types":["heart_rate"],"demographics":{"sex":"F"},"window":{"from":"2026-03-01","to":"2026-03-02"},"bucket":"day","purposeCode":"HRESCH","purpose":"Paging"}"#
            for _ in 0..<101 {
                #expect(try await harness.request(.post, "/v1/group-requests", json: body, token: parties.company).status == .created)
            }
            let company = try await ConsoleBrowser.company(harness, parties)
            try await company.get("/company")
            #expect(company.lastPage.components(separatedBy: "<a class=\"results\"").count - 1 == 100)
            let older = try #require(
                company.lastPage.range(of: #"href="/company?groups="#).map {
                    "/company?groups=" + company.lastPage[$0.upperBound...].prefix { $0 != "\"" }
                })
            try await company.get(older)
            #expect(company.lastPage.components(separatedBy: "<a class=\"results\"").count - 1 == 1)
            #expect(!company.lastPage.contains("/company?groups="))
        }
    }

    @Test(
        "the chart draws the min–max band, the mean line and, when available, the peer median where it is accurate enough, and says in plain words what the dashed line is and how sure"
    )
    func chart() throws {
        let day = CalendarDate(iso: "2026-03-01")!
        let own = (0..<5).map { Statistics.OwnBucket(start: day.adding(days: $0), count: 24, days: 1, mean: 70 + Double($0), min: 55, max: 110) }
        // Three days with a median to show; two whose median missed its target (nil): the table says "–", the line stops.
        let peers = (0..<5).map {
            Statistics.PeerBucket(
                start: day.adding(days: $0), month: day, people: 1200, peopleMargin95: 99, p10: nil, p50: $0 < 3 ? 71 : nil, p90: nil,
                p50Margin95: $0 < 3 ? 0.6 : nil)
        }
        let group = Statistics.PeerGroup(sex: .female, birthDate: CalendarDate(iso: "1990-01-01")!, today: day)
        let chart = HealthChart(
            statistics: Statistics(
                type: .heartRate, timeZone: "UTC", bucket: .day, own: own, group: group, peersAvailable: true, peerBuckets: peers))
        let withPeers = chart.svg
        #expect(withPeers.contains(#"<polygon class="band""#))
        #expect(withPeers.contains(#"<polyline class="mean""#))
        let line = try #require(withPeers.components(separatedBy: #"<polyline class="peer" points=""#).dropFirst().first?.prefix { $0 != "\"" })
        #expect(line.split(separator: " ").count == 3, "only the days with a median: \(line)")
        #expect(!withPeers.contains("nan") && !withPeers.contains("inf"))
        #expect((chart.values["rows"] as? [[String: String]])?.map { $0["peerMedian"] } == ["71", "71", "71", "–", "–"])
        #expect(
            chart.values["peerExplanation"] as? String
                == "Dashed line: the median of women aged 30–39 on Data4Help, month by month (this month: the last closed month's) — half of them are above it. 95 times in 100 it is within ±0.6 beats/min of the true median."
        )
        let alone = HealthChart(
            statistics: Statistics(
                type: .heartRate, timeZone: "UTC", bucket: .day, own: Array(own.prefix(1)), group: group, peersAvailable: false,
                peerBuckets: [])
        )
        #expect(!alone.svg.contains("peer") && alone.svg.contains(#"<polyline class="mean""#))
        #expect(alone.values["peerExplanation"] as? String == "")
        // Peers whose medians all missed the target: no line, no legend, no sentence.
        let noMedian = HealthChart(
            statistics: Statistics(
                type: .heartRate, timeZone: "UTC", bucket: .day, own: own, group: group, peersAvailable: true,
                peerBuckets: peers.map {
                    var peer = $0
                    (peer.p50, peer.p50Margin95) = (nil, nil)
                    return peer
                }))
        #expect(!noMedian.svg.contains("peer") && noMedian.values["peersAvailable"] as? Bool == false)
    }

    @Test("a cumulative type is drawn as one bar per day's total, standing on zero")
    func totalsChart() throws {
        let day = CalendarDate(iso: "2026-03-01")!
        let totals = [8_012.0, 0, 12_500]
        let own = totals.enumerated().map { index, total in
            Statistics.OwnBucket(start: day.adding(days: index), count: 40, days: 1, mean: total, min: total, max: total, total: total)
        }
        let group = Statistics.PeerGroup(sex: .female, birthDate: CalendarDate(iso: "1990-01-01")!, today: day)
        let chart = HealthChart(
            statistics: Statistics(
                type: .stepCount, timeZone: "Europe/Rome", bucket: .day, own: own, group: group, peersAvailable: false, peerBuckets: []))
        let svg = chart.svg
        #expect(svg.components(separatedBy: #"<rect class="bar""#).count - 1 == 3)
        #expect(!svg.contains("band") && !svg.contains(#"class="mean""#))
        #expect(svg.contains("Daily total of steps"))
        #expect(svg.contains(">0</text>"), "the axis starts at zero")
        #expect(svg.contains("<title>3 Mar 2026: 12500</title>"), "an English page's day")
        #expect(chart.values["isTotal"] as? Bool == true)
        // Every bar lies inside the axes, the first one too.
        let xs = svg.components(separatedBy: #"<rect class="bar" x=""#).dropFirst().compactMap { Double($0.prefix { $0 != "\"" }) }
        #expect(xs.count == 3 && xs.allSatisfy { $0 > HealthChart.left })
        let zeros = HealthChart(
            statistics: Statistics(
                type: .stepCount, timeZone: "UTC", bucket: .day,
                own: own.map {
                    var day = $0
                    day.mean = 0
                    return day
                }, group: group,
                peersAvailable: false, peerBuckets: [])
        ).svg
        #expect(!zeros.contains("-1") && !zeros.contains("nan"), "an all-zero series keeps its zero baseline")
    }
}
