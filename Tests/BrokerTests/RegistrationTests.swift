import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

@Suite("Registration")
struct RegistrationTests {
    // MARK: Success

    /// The stored account of `email`, as the API shows it to its owner (registration itself answers only
    /// a receipt: the same for a new and a taken registration).
    private func storedAccount(_ harness: TestHarness, _ email: String) async throws -> [String: String?] {
        let rows = try await harness.sql(
            """
            SELECT a.status, a.role, a.password_hash, u.fiscal_code, to_char(u.birth_date, 'YYYY-MM-DD'), u.sex::text, u.full_name,
                   t.vat_number, t.company_name, t.description
            FROM accounts a LEFT JOIN users u ON u.account_id = a.id LEFT JOIN third_parties t ON t.account_id = a.id
            WHERE a.email = '\(email.lowercased())'
            """)
        let row = try #require(rows.first, "no account for \(email)")
        let values = try row.decode((String, String, String?, String?, String?, String?, String?, String?, String?, String?).self)
        return [
            "status": values.0, "role": values.1, "passwordHash": values.2, "fiscalCode": values.3, "birthDate": values.4,
            "sex": values.5, "fullName": values.6, "vatNumber": values.7, "companyName": values.8, "description": values.9,
        ]
    }

    @Test("a person registers: 202 with a receipt that holds nothing but the email, a pending account, one activation mail")
    func personRegisters() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let response = try await harness.request(.post, "/v1/users", json: person.registrationJSON)
            #expect(response.status == .accepted)
            let receipt = try harness.object(response)
            #expect(Set(receipt.keys) == ["email", "message"])
            #expect(receipt["email"] as? String == person.email)
            let body = harness.text(response)
            #expect(!body.contains("argon2"))
            #expect(!body.contains(person.password))
            #expect(!body.contains(person.fiscalCode))

            let account = try await storedAccount(harness, person.email)
            #expect(account["status"] == "pending")
            #expect(account["role"] == "user")
            #expect(account["fiscalCode"] == person.fiscalCode)
            #expect(account["birthDate"] == person.birthDate)
            #expect(account["sex"] == person.sex)
            #expect(account["fullName"] == person.fullName)
            #expect((account["passwordHash"] ?? nil)?.hasPrefix("$argon2id$") == true)

            let mails = try await harness.mails()
            try #require(mails.count == 1)
            let mail = mails[0].replacingOccurrences(of: "\r\n", with: "\n")
            #expect(mail.contains("To: <\(person.email)>"))
            let tokenLine = try #require(mail.split(separator: "\n").first { $0.hasPrefix("Activation token: ") })
            let token = String(tokenLine.dropFirst("Activation token: ".count))
            #expect(token.hasPrefix("d4ha_") && token.count > 30)
            #expect(mail.contains("http://127.0.0.1:8080/activate?token=\(token)\n"))
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE status = 'pending'") == 1)
        }
    }

    /// Every other test server hashes at a lower cost (`TestHarness.passwordHashing`); this one keeps the
    /// product's: a server configured as an operator's stores OWASP's Argon2id parameters.
    @Test("the product hashes passwords with Argon2id at OWASP's cost: 19 MiB, two passes, one lane")
    func owaspCost() async throws {
        #expect(BrokerConfiguration(databaseURL: "postgres://x@127.0.0.1/x").passwordHashing == PasswordHasher.Parameters())
        try await TestHarness.run(configure: { $0.passwordHashing = PasswordHasher.Parameters() }) { harness in
            let person = TestHarness.Person()
            #expect(try await harness.request(.post, "/v1/users", json: person.registrationJSON).status == .accepted)
            let hash = try #require(try await storedAccount(harness, person.email)["passwordHash"] ?? nil)
            #expect(hash.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"), "\(hash)")
        }
    }

    @Test("an email is stored lower-cased, so a person registering with capitals logs in as typed in lower case")
    func emailIsCaseInsensitive() async throws {
        try await TestHarness.run { harness in
            var person = TestHarness.Person()
            let lower = person.email
            person.email = lower.uppercased()
            let response = try await harness.request(.post, "/v1/users", json: person.registrationJSON)
            #expect(response.status == .accepted)
            #expect(try harness.object(response)["email"] as? String == lower)
            try await harness.activate(email: lower)
            _ = try await harness.logIn(email: lower, password: person.password)
        }
    }

    @Test("a company registers with a VAT number and gets a pending account and an activation mail")
    func companyRegisters() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company()
            let json = """
                {"email":"\(company.email)","password":"\(company.password)","vatNumber":"\(company.vatNumber)",\
                "companyName":"\(company.companyName)","description":"Cardiology studies"}
                """
            let response = try await harness.request(.post, "/v1/third-parties", json: json)
            #expect(response.status == .accepted)
            #expect(try harness.object(response)["email"] as? String == company.email)
            let account = try await storedAccount(harness, company.email)
            #expect(account["status"] == "pending")
            #expect(account["role"] == "third_party")
            #expect(account["vatNumber"] == company.vatNumber)
            #expect(account["companyName"] == company.companyName)
            #expect(account["description"] == "Cardiology studies")
            #expect(account["fiscalCode"] == .some(nil))
            #expect(try await harness.mails().count == 1)
            #expect(try await harness.activationToken(for: company.email)?.hasPrefix("d4ha_") == true)
        }
    }

    // MARK: Taken identities (the answer is the one of a new registration: RegistrationOracleTests)

    @Test(
        "an email that is already registered, in any letter case, creates nothing; the owner gets one notice",
        arguments: ["same", "upper-case", "padded"])
    func duplicateEmail(variant: String) async throws {
        try await TestHarness.run { harness in
            let first = TestHarness.Person()
            try await harness.activeUser(first)
            var second = TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode(), fullName: "Someone Else")
            second.email =
                switch variant {
                case "upper-case": first.email.uppercased()
                case "padded": "  \(first.email) "
                default: first.email
                }
            let response = try await harness.request(.post, "/v1/users", json: second.registrationJSON)
            #expect(response.status == .accepted)
            #expect(try harness.object(response)["email"] as? String == first.email)
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 1)
            #expect(try await harness.int("SELECT count(*) FROM users") == 1)
            #expect(try await harness.int("SELECT count(*) FROM activation_tokens") == 1)
            let mails = try await harness.mails()
            #expect(mails.count == 2)
            #expect(mails.last?.contains("Someone tried to register a Data4Help account with your email address") == true)
        }
    }

    @Test("an email taken by a person cannot register a company either")
    func duplicateEmailAcrossRoles() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)  // a pending one of the same email is replaced (PreHijackingTests)
            let company = TestHarness.Company(email: person.email)
            let response = try await harness.request(.post, "/v1/third-parties", json: company.registrationJSON)
            #expect(response.status == .accepted)
            #expect(try await harness.int("SELECT count(*) FROM third_parties") == 0)
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 1)
        }
    }

    @Test("a fiscal code that is already registered, in any letter case, creates nothing", arguments: [false, true])
    func duplicateFiscalCode(lowerCased: Bool) async throws {
        try await TestHarness.run { harness in
            let first = TestHarness.Person()
            #expect(try await harness.request(.post, "/v1/users", json: first.registrationJSON).status == .accepted)
            let code = lowerCased ? first.fiscalCode.lowercased() : first.fiscalCode
            let second = TestHarness.Person(fiscalCode: code, fullName: "Laura Bianchi Bis")
            let response = try await harness.request(.post, "/v1/users", json: second.registrationJSON)
            #expect(response.status == .accepted)
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 1)
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE email = '\(second.email)'") == 0)
            #expect(try await harness.activationToken(for: second.email) == nil)
        }
    }

    @Test("a VAT number that is already registered creates nothing")
    func duplicateVATNumber() async throws {
        try await TestHarness.run { harness in
            let first = TestHarness.Company()
            #expect(try await harness.request(.post, "/v1/third-parties", json: first.registrationJSON).status == .accepted)
            let second = TestHarness.Company(companyName: "Another Company S.r.l.")
            let response = try await harness.request(.post, "/v1/third-parties", json: second.registrationJSON)
            #expect(response.status == .accepted)
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 1)
            #expect(try await harness.int("SELECT count(*) FROM third_parties") == 1)
            #expect(try await harness.activationToken(for: second.email) == nil)
        }
    }

    // MARK: Invalid fields

    struct InvalidRegistration: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var path = "/v1/users"
        var json: String
        var fields: Set<String>

        init(_ description: String, person change: (inout TestHarness.Person) -> Void, fields: Set<String>) {
            var person = TestHarness.Person()
            change(&person)
            (testDescription, json, self.fields) = (description, person.registrationJSON, fields)
        }

        init(_ description: String, company change: (inout TestHarness.Company) -> Void, fields: Set<String>) {
            var company = TestHarness.Company()
            change(&company)
            (testDescription, path, json, self.fields) = (description, "/v1/third-parties", company.registrationJSON, fields)
        }
    }

    /// The default person's code with a male day (01 instead of 41).
    static let maleCodeForJanuaryFirst1990: String = {
        let first15 = "BNCLRA90A01F205"
        return first15 + String(FiscalCode.checkCharacter(for: first15)!)
    }()

    static let invalidRegistrations: [InvalidRegistration] = [
        .init("an email without an at sign", person: { $0.email = "laura.bianchi.example.com" }, fields: ["email"]),
        .init("an email without a domain", person: { $0.email = "laura@" }, fields: ["email"]),
        .init("a 9-character password", person: { $0.password = "123456789" }, fields: ["password"]),
        .init("a password equal to the email", person: { $0.password = $0.email }, fields: ["password"]),
        .init(
            "a password equal to the email in capitals", person: { $0.password = $0.email.uppercased() },
            fields: ["password"]),
        .init(
            "a fiscal code with a wrong check character", person: { $0.fiscalCode = "BNCLRA90A41F205J" },
            fields: ["fiscalCode"]),
        .init("a fiscal code of 15 characters", person: { $0.fiscalCode = "BNCLRA90A41F205" }, fields: ["fiscalCode"]),
        .init(
            "a fiscal code with a month letter that is no month",
            person: {
                $0.fiscalCode = "BNCLRA90F41F205" + String(FiscalCode.checkCharacter(for: "BNCLRA90F41F205")!)
            }, fields: ["fiscalCode"]),
        .init(
            "a fiscal code that disagrees with the day of birthDate", person: { $0.birthDate = "1990-01-02" },
            fields: ["fiscalCode"]),
        .init(
            "a fiscal code that disagrees with the month of birthDate", person: { $0.birthDate = "1990-02-01" },
            fields: ["fiscalCode"]),
        .init(
            "a fiscal code that disagrees with the year of birthDate", person: { $0.birthDate = "1991-01-01" },
            fields: ["fiscalCode"]),
        .init("a woman's fiscal code (day + 40) declared as a man", person: { $0.sex = "M" }, fields: ["fiscalCode"]),
        .init(
            "a man's fiscal code declared as a woman", person: { $0.fiscalCode = maleCodeForJanuaryFirst1990 },
            fields: ["fiscalCode"]),
        .init(
            "a birthDate that does not exist (30 February)", person: { $0.birthDate = "1990-02-30" },
            fields: ["birthDate"]),
        .init("a birthDate that is not YYYY-MM-DD", person: { $0.birthDate = "01/01/1990" }, fields: ["birthDate"]),
        .init("a birthDate in the future", person: { $0.birthDate = "2090-01-01" }, fields: ["birthDate"]),
        .init("an empty fullName", person: { $0.fullName = "" }, fields: ["fullName"]),
        .init("a fullName of spaces only", person: { $0.fullName = "   " }, fields: ["fullName"]),
        .init("a sex that is neither F nor M", person: { $0.sex = "X" }, fields: ["sex"]),
        .init("a VAT number with a wrong check digit", company: { $0.vatNumber = "12345678904" }, fields: ["vatNumber"]),
        .init("a VAT number of 10 digits", company: { $0.vatNumber = "1234567890" }, fields: ["vatNumber"]),
        .init("a VAT number with letters", company: { $0.vatNumber = "IT123456789" }, fields: ["vatNumber"]),
        .init("an empty companyName", company: { $0.companyName = "" }, fields: ["companyName"]),
        .init("a company password shorter than 10 characters", company: { $0.password = "short" }, fields: ["password"]),
        .init(
            "several invalid fields at once",
            person: {
                $0.email = "nope"
                $0.password = "short"
                $0.fullName = ""
            }, fields: ["email", "password", "fullName"]),
    ]

    @Test(
        "each invalid field is answered with a 422 naming it, nothing is stored and no mail is sent",
        arguments: invalidRegistrations)
    func invalidField(_ registration: InvalidRegistration) async throws {
        try await TestHarness.run { harness in
            let response = try await harness.request(.post, registration.path, json: registration.json)
            #expect(response.status == .unprocessableContent)
            #expect(response.headers[.contentType] == "application/problem+json")
            #expect(Set(try harness.errorFields(response)) == registration.fields)
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 0)
            #expect(try await harness.int("SELECT count(*) FROM audit_events") == 0)
            #expect(try await harness.mails().isEmpty)
        }
    }

    @Test(
        "a missing or mistyped required field is a 422 naming it",
        arguments: [
            (
                "/v1/users", #"{"email":"a.b@example.com","password":"correct-horse-battery","fullName":"A B","birthDate":"1990-01-01","sex":"F"}"#,
                "fiscalCode"
            ),
            (
                "/v1/users", #"{"email":"a.b@example.com","fiscalCode":"BNCLRA90A41F205I","fullName":"A B","birthDate":"1990-01-01","sex":"F"}"#,
                "password"
            ),
            (
                "/v1/users",
                #"{"email":"a.b@example.com","password":1234567890123,"fiscalCode":"BNCLRA90A41F205I","fullName":"A B","birthDate":"1990-01-01","sex":"F"}"#,
                "password"
            ),
            ("/v1/third-parties", #"{"email":"c@example.com","password":"company-password-1","companyName":"C"}"#, "vatNumber"),
            ("/v1/third-parties", #"{"email":"c@example.com","password":"company-password-1","vatNumber":"12345678903"}"#, "companyName"),
        ])
    func missingField(path: String, json: String, field: String) async throws {
        try await TestHarness.run { harness in
            let response = try await harness.request(.post, path, json: json)
            #expect(response.status == .unprocessableContent)
            #expect(try harness.errorFields(response) == [field])
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 0)
            #expect(try await harness.mails().isEmpty)
        }
    }

    @Test("a body that is not JSON is a 400, nothing is stored and no mail is sent")
    func malformedJSON() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let truncated = String(person.registrationJSON.dropLast(2))
            let response = try await harness.request(.post, "/v1/users", json: truncated)
            #expect(response.status == .badRequest)
            #expect(response.headers[.contentType] == "application/problem+json")
            #expect(try harness.object(response)["status"] as? Int == 400)
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 0)
            #expect(try await harness.mails().isEmpty)
        }
    }

    // MARK: Omocodia

    /// `RSSMRA85T10A562S` (a man born 1985-12-10) with the digits at `positions` replaced by their omocodia letters.
    static func omocodia(_ positions: [Int]) -> String {
        let substitutes = Array("LMNPQRSTUV")
        var characters = Array("RSSMRA85T10A562")
        for position in positions {
            characters[position] = substitutes[characters[position].wholeNumberValue!]
        }
        let first15 = String(characters)
        return first15 + String(FiscalCode.checkCharacter(for: first15)!)
    }

    @Test(
        "a fiscal code with omocodia substitutions is accepted and kept as issued",
        arguments: [[14], [14, 13, 12], [6, 7, 9, 10, 12, 13, 14]])
    func omocodiaAccepted(positions: [Int]) async throws {
        try await TestHarness.run { harness in
            let code = Self.omocodia(positions)
            let person = TestHarness.Person(
                email: "mario.rossi.\(positions.count)@example.com", fiscalCode: code, fullName: "Mario Rossi",
                birthDate: "1985-12-10", sex: "M")
            let response = try await harness.request(.post, "/v1/users", json: person.registrationJSON)
            #expect(response.status == .accepted, "\(code): \(harness.text(response))")
            #expect(try await harness.int("SELECT count(*) FROM users WHERE fiscal_code = '\(code)'") == 1)
        }
    }

    @Test("the holders of a plain fiscal code and of its omocodia variant are different people who can both register")
    func omocodiaIsAnotherPerson() async throws {
        try await TestHarness.run { harness in
            let plain = TestHarness.Person(
                fiscalCode: "RSSMRA85T10A562S", fullName: "Mario Rossi", birthDate: "1985-12-10", sex: "M")
            let variant = TestHarness.Person(
                fiscalCode: Self.omocodia([14]), fullName: "Mario Rossi", birthDate: "1985-12-10", sex: "M")
            let first = try await harness.request(.post, "/v1/users", json: plain.registrationJSON)
            let second = try await harness.request(.post, "/v1/users", json: variant.registrationJSON)
            #expect(first.status == .accepted)
            #expect(second.status == .accepted, "\(harness.text(second))")
            #expect(try await harness.int("SELECT count(*) FROM users") == 2)
        }
    }
}
