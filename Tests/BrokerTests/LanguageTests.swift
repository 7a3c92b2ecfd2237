import BrokerTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerServer

/// The language of an account and of a visitor: `Accept-Language` read as RFC 9110 says, and the account's
/// choice kept from registration and changed in the profile (issue 30, item 4).
@Suite("Language")
struct LanguageTests {
    @Test(
        "Accept-Language picks the best language we speak, else English",
        arguments: [
            ("it-IT,it;q=0.9,en;q=0.8", Language.it),
            ("it", .it),
            ("IT-it", .it),
            ("en-GB,en;q=0.9,it;q=0.8", .en),
            ("de-DE,de;q=0.9,it;q=0.5,en;q=0.3", .it),  // German first, then the best of ours
            ("en;q=0.2, it;q=0.7", .it),  // q, not order, decides
            ("it;q=0.5, en;q=0.5", .it),  // a tie goes to the first named
            ("it;q=0, en", .en),  // q=0 refuses
            ("it;q=0", .en),  // nothing acceptable of ours: English
            ("en;q=0, *", .it),  // the wildcard is any language not refused
            ("*", .en),
            ("fr-FR, *;q=0.1", .en),
            ("de", .en),
            ("", .en),
            (";;;,,,q=", .en),
            ("it;q=abc", .en),  // an unreadable weight accepts nothing
            ("itx, it-CH;q=0.4", .it),  // `itx` is not Italian; `it-CH` is
        ])
    func acceptLanguage(header: String, expected: Language) {
        #expect(Language(acceptLanguage: header) == expected, "\(header)")
    }

    @Test("no header, or an absurdly long one, is English without reading it")
    func missingOrHuge() {
        #expect(Language(acceptLanguage: nil) == .en)
        #expect(Language.preferred(acceptLanguage: nil) == nil)
        #expect(Language(acceptLanguage: String(repeating: "de;q=0.1,", count: 200) + "it") == .en)
    }

    @Test("a tag as a form or query sends it", arguments: [("it", Language.it), ("it-IT", .it), ("en_GB", .en), ("EN", .en)])
    func tags(tag: String, expected: Language) {
        #expect(Language(tag: tag) == expected)
    }

    @Test("unknown tags are refused, not defaulted", arguments: ["", "fr", "i", "italian", "e n"])
    func unknownTags(tag: String) {
        #expect(Language(tag: tag) == nil)
    }

    @Test("a registration keeps its language, the profile changes it, and an auditor is English")
    func storedLanguage() async throws {
        try await RoleRuleTests.withServices { services in
            let logger = TestDatabase.logger
            let accounts = services.accounts
            let italian = try #require(
                try await accounts.register(
                    .init(
                        email: "giulia.\(UUID().uuidString.prefix(8))@example.com", password: "correct-horse-battery",
                        fiscalCode: "BNCLRA90A41F205I", fullName: "Giulia Bianchi", birthDate: "1990-01-01", sex: "F", language: .it),
                    logger: logger))
            #expect(italian.language == .it)
            let company = try #require(
                try await accounts.register(
                    .init(
                        email: "ricerca.\(UUID().uuidString.prefix(8))@example.com", password: "company-password-1", vatNumber: "12345678903",
                        companyName: "Ricerca S.r.l.", description: nil),
                    logger: logger))
            #expect(company.language == .en, "no language named: the fallback")
            let auditor = try await accounts.addAuditor(email: "audit.\(UUID().uuidString.prefix(8))@example.com", logger: logger)
            #expect(auditor.language == .en)

            let principal = Principal(accountID: company.id, role: .thirdParty, credential: .session(tokenHash: Data()))
            let updated = try await accounts.update(principal, with: .init(language: .it), clientAddress: "127.0.0.1", logger: logger)
            #expect(updated.account.language == .it)
            let stored = try await services.client.withConnection {
                try await AccountStore.language(accountID: company.id, on: $0, logger: logger)
            }
            #expect(stored == .it)
            let unchanged = try await accounts.update(
                principal, with: .init(companyName: "Ricerca 2 S.r.l."), clientAddress: "127.0.0.1", logger: logger)
            #expect(unchanged.account.language == .it, "an update that does not name the language keeps it")
        }
    }

    // MARK: Over HTTP

    @Test("a problem is in the language of Accept-Language; its type, status and field names are not")
    func problemLanguage() async throws {
        try await TestHarness.run { harness in
            let italian = try await harness.request(.get, "/v1/me", headers: [.acceptLanguage: "it-IT,it;q=0.9,en;q=0.8"])
            let english = try await harness.request(.get, "/v1/me")
            #expect(italian.status == .unauthorized && english.status == .unauthorized)
            let it = try harness.object(italian)
            let en = try harness.object(english)
            #expect(it["title"] as? String == "Autenticazione richiesta")
            #expect(en["title"] as? String == "Authentication required")
            #expect(it["type"] as? String == en["type"] as? String)
            #expect(it["status"] as? Int == 401)
            #expect(italian.headers[.contentLanguage] == "it" && english.headers[.contentLanguage] == "en")
            #expect(italian.headers[.vary]?.contains("Accept-Language") == true)

            var person = TestHarness.Person()
            person.email = "not-an-email"
            let invalid = try await harness.request(
                .post, "/v1/users", json: person.registrationJSON, headers: [.acceptLanguage: "it"])
            #expect(invalid.status == .unprocessableContent)
            let problem = try harness.object(invalid)
            #expect(problem["title"] as? String == "La richiesta non è valida")
            let errors = try #require(problem["errors"] as? [[String: Any]])
            #expect(errors.contains { $0["field"] as? String == "email" && $0["message"] as? String == "deve contenere esattamente una @" })
            // A language we do not speak, or none at all: English.
            let german = try harness.object(try await harness.request(.get, "/v1/me", headers: [.acceptLanguage: "de-DE"]))
            #expect(german["title"] as? String == "Authentication required")
        }
    }

    @Test("registration takes its language from the body, else Accept-Language; the profile shows and changes it")
    func profileLanguage() async throws {
        try await TestHarness.run { harness in
            let fromHeader = TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode())
            let registered = try await harness.request(
                .post, "/v1/users", json: fromHeader.registrationJSON, headers: [.acceptLanguage: "it-CH, en;q=0.5"])
            #expect(registered.status == .accepted)
            try await harness.activate(email: fromHeader.email)
            let token = try await harness.logIn(email: fromHeader.email, password: fromHeader.password)
            #expect(try harness.object(try await harness.request(.get, "/v1/me", token: token))["language"] as? String == "it")

            // The body's language wins over the header's.
            let company = TestHarness.Company()
            var json = company.registrationJSON
            json.removeLast()
            json += #","language":"en"}"#
            #expect(try await harness.request(.post, "/v1/third-parties", json: json, headers: [.acceptLanguage: "it"]).status == .accepted)
            try await harness.activate(email: company.email)
            let companyToken = try await harness.logIn(email: company.email, password: company.password)
            #expect(try harness.object(try await harness.request(.get, "/v1/me", token: companyToken))["language"] as? String == "en")

            let changed = try await harness.request(.patch, "/v1/me", json: #"{"language":"it"}"#, token: companyToken)
            #expect(changed.status == .ok)
            #expect(try harness.object(changed)["language"] as? String == "it")
            // A language we do not speak is refused by name, and changes nothing.
            let refused = try await harness.request(.patch, "/v1/me", json: #"{"language":"fr"}"#, token: companyToken)
            #expect(refused.status == .unprocessableContent)
            #expect(try harness.errorFields(refused) == ["language"])
            #expect(try harness.object(try await harness.request(.get, "/v1/me", token: companyToken))["language"] as? String == "it")
        }
    }

    @Test("console: a visitor's page follows ?lang=, then the cookie, then Accept-Language; an account's, its own")
    func consoleLanguage() async throws {
        try await TestHarness.run { harness in
            func h1(_ html: String) -> String? {
                html.firstMatch(of: /<h1>([^<]*)<\/h1>/).map { String($0.output.1) }
            }
            let visitor = ConsoleBrowser(harness)
            let byHeader = try await visitor.send(.get, "/login", body: nil, headers: [.acceptLanguage: "it-IT,it;q=0.9"])
            #expect(h1(String(buffer: byHeader.body)) == "Accedi")
            #expect(byHeader.headers[.contentLanguage] == "it")
            #expect(String(buffer: byHeader.body).contains(#"<html lang="it">"#))
            // ?lang=en beats the header and is remembered.
            let chosen = try await visitor.send(.get, "/login?lang=en", body: nil, headers: [.acceptLanguage: "it"])
            #expect(h1(String(buffer: chosen.body)) == "Sign in")
            #expect(chosen.headers[values: .setCookie].contains { $0.hasPrefix("d4h_lang=en") && $0.contains("HttpOnly") })
            let remembered = try await visitor.send(.get, "/register", body: nil, headers: [.acceptLanguage: "it"])
            #expect(h1(String(buffer: remembered.body)) == "Create an account")
            // An unknown ?lang= is no choice: the header decides, and no cookie is set.
            let unknown = try await ConsoleBrowser(harness).send(.get, "/login?lang=xx", body: nil, headers: [.acceptLanguage: "it"])
            #expect(h1(String(buffer: unknown.body)) == "Accedi")
            #expect(!unknown.headers[values: .setCookie].contains { $0.hasPrefix("d4h_lang=") })

            // A signed-in person reads their account's language, whatever the browser asks; the account page changes it.
            let parties = try await harness.requestParties()
            let browser = try await ConsoleBrowser.person(harness, parties)
            let english = try await browser.send(.get, "/inbox", body: nil, headers: [.acceptLanguage: "it"])
            #expect(h1(String(buffer: english.body)) == "Requests for your data")
            try await browser.get("/account")
            let saved = try await browser.post("/account/language", [("language", "it")])
            #expect(saved.status == .seeOther)
            try await browser.get("/inbox")
            #expect(h1(browser.lastPage) == "Richieste dei tuoi dati")
            #expect(!browser.lastPage.contains("⟦"))
            try await browser.get("/account")
            let bad = try await browser.post("/account/language", [("language", "fr")])
            #expect(bad.status == .unprocessableContent)
            #expect(browser.lastPage.contains(#"id="language-error""#))
            let me = try harness.object(try await harness.request(.get, "/v1/me", token: parties.person))
            #expect(me["language"] as? String == "it")
        }
    }
}
