import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// The authorisation matrix, generated from `openapi.yaml`: every operation, read from the document at test
/// time, is called (a) without a token, (b) with an expired one, (c) with a revoked one (a logged-out session;
/// for third-party operations also a revoked API key), (d) by each role its `x-roles` leaves out, and (e) for
/// operations with path ids, with another party's ids, and must answer 401, 401, 401, 403 and 404 with a
/// problem+json body that reveals nothing about the other party. A new operation is covered automatically; one
/// without `x-roles`, or with path parameters but no entry in `otherPartyIDs`, fails the suite until someone
/// decides who may call it and whose ids it takes.
@Suite("Authorization matrix", .serialized)
struct AuthorizationMatrixTests {
    static let roles = ["user", "third_party", "auditor"]

    /// Where (e) gets another party's ids for an operation with path parameters, keyed by `METHOD path`.
    enum OtherPartyIDs: Sendable {
        /// The ids of a resource that belongs to another party (`OtherParty` creates each kind once).
        case owned(@Sendable (OtherParty) -> [String: String])
        /// The allowed role sees every resource of this kind, so nothing is another party's: an id that was never
        /// issued stands in, and must be a 404 just the same.
        case visibleToEveryoneOfTheRole(why: String)
    }

    static let otherPartyIDs: [String: OtherPartyIDs] = [
        "DELETE /v1/api-keys/{id}": .owned { ["id": $0.apiKeyID] },
        // Another person's account id is no company: blocking it must be the 404 of an unknown company, never
        // a hint that a person has this id.
        "PUT /v1/me/blocks/{thirdPartyId}": .owned { ["thirdPartyId": $0.personID] },
        // A company another person blocked; the caller did not.
        "DELETE /v1/me/blocks/{thirdPartyId}": .owned { ["thirdPartyId": $0.blockedCompanyID] },
        "GET /v1/single-requests/{id}": .owned { ["id": $0.subscribedRequestID] },
        "POST /v1/single-requests/{id}/accept": .owned { ["id": $0.pendingRequestID] },
        "POST /v1/single-requests/{id}/refuse": .owned { ["id": $0.pendingRequestID] },
        "POST /v1/single-requests/{id}/cancel": .owned { ["id": $0.pendingRequestID] },
        "DELETE /v1/single-requests/{id}/subscription": .owned { ["id": $0.subscribedRequestID] },
        "GET /v1/single-requests/{id}/data": .owned { ["id": $0.subscribedRequestID] },
        "GET /v1/single-requests/{id}/positions": .owned { ["id": $0.subscribedRequestID] },
        "GET /v1/single-requests/{id}/receipts": .owned { ["id": $0.subscribedRequestID] },
        "GET /v1/single-requests/{id}/consent": .owned { ["id": $0.subscribedRequestID] },
        "GET /v1/group-requests/{id}": .owned { ["id": $0.groupRequestID] },
        "GET /v1/group-requests/{id}/results": .owned { ["id": $0.groupRequestID] },
        "DELETE /v1/group-requests/{id}/subscription": .owned { ["id": $0.groupRequestID] },
        "GET /v1/audit/group-requests/{id}/results": .visibleToEveryoneOfTheRole(why: "auditors read every group request"),
        "GET /v1/me/imports/{id}": .owned { ["id": $0.importJobID] },
        "GET /v1/fhir/bulk-status/{id}": .owned { ["id": $0.bulkExportID] },
        "DELETE /v1/fhir/bulk-status/{id}": .owned { ["id": $0.bulkExportID] },
        "GET /v1/fhir/bulk-files/{id}/{file}": .owned { ["id": $0.bulkExportID, "file": "1.ndjson"] },
        // A run is public; what is the organiser's own is changing it: another organiser's run is a 404.
        "PATCH /v1/runs/{id}": .owned { ["id": $0.runID] },
        "POST /v1/runs/{id}/cancel": .owned { ["id": $0.runID] },
        "GET /v1/runs/{id}": .visibleToEveryoneOfTheRole(why: "runs are public (R42)"),
        "GET /v1/runs/{id}/results": .visibleToEveryoneOfTheRole(why: "results are public"),
        "GET /v1/runs/{id}/live": .visibleToEveryoneOfTheRole(why: "spectating needs no account (R49)"),
        "GET /v1/runs/{id}/live/events": .visibleToEveryoneOfTheRole(why: "spectating needs no account (R49)"),
        // A person's place is keyed by the run and their own account: any run id is "theirs" to name.
        "POST /v1/runs/{id}/participation": .visibleToEveryoneOfTheRole(why: "people join any listed run"),
        "GET /v1/runs/{id}/participation": .visibleToEveryoneOfTheRole(why: "the caller's own place in any run"),
        "DELETE /v1/runs/{id}/participation": .visibleToEveryoneOfTheRole(why: "the caller's own place in any run"),
        "POST /v1/runs/{id}/participation/check-in": .visibleToEveryoneOfTheRole(why: "the caller's own place in any run"),
        "PUT /v1/runs/{id}/participation/privacy-zone": .visibleToEveryoneOfTheRole(why: "the caller's own place in any run"),
        "DELETE /v1/runs/{id}/participation/privacy-zone": .visibleToEveryoneOfTheRole(why: "the caller's own place in any run"),
        // Anonymous: the token is the credential itself and names no one else's resource (PasswordResetTests attack it).
        "POST /v1/password-resets/{token}": .visibleToEveryoneOfTheRole(why: "a reset token is its own credential"),
    ]

    /// Another company and another person, with one resource of every kind an id in a path can name.
    struct OtherParty: Sendable {
        var personID = "", personEmail = "", personFiscalCode = "", personName = ""
        var companyID = "", companyEmail = "", companyName = "", companyVATNumber = ""
        /// A heart rate the person uploaded: no error body may contain it.
        var sampleValue = ""
        /// company → person: one accepted with a subscription (and data), one pending.
        var subscribedRequestID = "", pendingRequestID = ""
        /// The company's accepted group request, with a subscription.
        var groupRequestID = ""
        var apiKeyID = ""
        /// A third company the person blocked.
        var blockedCompanyID = ""
        /// The person's background Apple Health import (finished).
        var importJobID = ""
        /// The company's FHIR bulk export (of the subscription above).
        var bulkExportID = ""
        /// The company's upcoming run.
        var runID = ""

        /// What must never appear in an answer to someone else (unless the caller sent it).
        var secrets: [String] {
            [
                personID, personEmail, personFiscalCode, personName, companyID, companyEmail, companyName, companyVATNumber, sampleValue,
                subscribedRequestID, pendingRequestID, groupRequestID, apiKeyID, blockedCompanyID, importJobID,
            ]
        }
    }

    /// The callers' tokens by role: working, expired and revoked sessions, and the company's API keys.
    struct Callers: Sendable {
        var valid: [String: String] = [:]
        var expired: [String: String] = [:]
        var revoked: [String: String] = [:]
        var apiKey = ""
        var revokedAPIKey = ""
        /// The same company's key of scope `read_only`.
        var readOnlyAPIKey = ""
    }

    // MARK: Classification (no server needed)

    @Test("every operation of openapi.yaml declares x-roles; public ones are exactly those without security, as the server gate lists them")
    func classification() throws {
        let operations = try OpenAPIOperations.load()
        // A document that did not parse must not pass for an empty matrix.
        #expect(operations.count >= 40, "only \(operations.count) operations read from \(OpenAPIOperations.documentURL.path)")
        for operation in operations {
            guard let roles = operation.roles, !roles.isEmpty else {
                Issue.record("\(operation) has no x-roles: add `x-roles: [user|third_party|auditor, …]` or `x-roles: [anyone]` to it in openapi.yaml")
                continue
            }
            #expect(Set(roles).isSubset(of: Self.roles + ["anyone"]), "\(operation): unknown role in x-roles \(roles)")
            #expect(roles == ["anyone"] || !roles.contains("anyone"), "\(operation): `anyone` goes alone")
            #expect(
                (roles == ["anyone"]) == !operation.requiresToken,
                "\(operation): x-roles \(roles) but \(operation.requiresToken ? "requires" : "does not require") a token (security)")
            if !operation.pathParameters.isEmpty {
                #expect(
                    Self.otherPartyIDs[operation.key] != nil,
                    "\(operation) takes \(operation.pathParameters) but has no entry in AuthorizationMatrixTests.otherPartyIDs: say whose ids it takes"
                )
            }
        }
        let withPathParameters = Set(operations.filter { !$0.pathParameters.isEmpty }.map(\.key))
        for key in Self.otherPartyIDs.keys {
            #expect(withPathParameters.contains(key), "otherPartyIDs names \(key), which openapi.yaml does not have")
        }
        // The server authenticates before decoding anything for every operation but these.
        #expect(Set(operations.filter { !$0.requiresToken }.map(\.key)) == AuthenticationGate.publicOperations)
    }

    // MARK: The matrix

    @Test("every operation: 401 without a token or with an expired or revoked one, 403 for each wrong role, 404 for another party's ids, and no leak")
    func matrix() async throws {
        let operations = try OpenAPIOperations.load()
        try #require(operations.count >= 40, "only \(operations.count) operations read from openapi.yaml")
        try await TestHarness.run(
            configure: {
                GroupFixtures.smallK(&$0)
                // The other party's group subscription starts on 2026-03-01, so its first release holds every day
                // closed since: more than a person's yearly cap, which would leave everyone out of it.
                $0.privacy.personBudget = 100
                $0.privacy.companyBudget = 100
            }, noise: NoNoise()
        ) { harness in
            let callers = try await Self.callers(harness)
            let other = try await Self.otherParty(harness)
            var checked: [String: Int] = [:]
            var operationsChecked = 0
            for operation in operations {
                let roles = try #require(operation.roles, "\(operation) has no x-roles")
                guard roles != ["anyone"] else { continue }
                let ids: [String: String]
                switch Self.otherPartyIDs[operation.key] {
                case .owned(let make)?: ids = make(other)
                case .visibleToEveryoneOfTheRole?:
                    ids = Dictionary(uniqueKeysWithValues: operation.pathParameters.map { ($0, UUID().uuidString.lowercased()) })
                case nil:
                    try #require(operation.pathParameters.isEmpty, "\(operation) has path parameters but no entry in otherPartyIDs")
                    ids = [:]
                }
                for name in operation.pathParameters { try #require(ids[name] != nil, "otherPartyIDs[\(operation.key)] gives no \(name)") }
                let path = operation.path(with: ids)
                let allowed = roles.filter { $0 != "anyone" }
                var cells: [Cell] = []
                // (a)–(c): a body and query that would not even decode — the token is checked first.
                cells.append(Cell(label: "(a) no token", token: nil, path: path, decodable: false, expected: .unauthorized))
                for role in allowed {
                    cells.append(
                        Cell(
                            label: "(b) expired \(role) session", token: callers.expired[role], path: path, decodable: false, expected: .unauthorized)
                    )
                    cells.append(
                        Cell(
                            label: "(c) logged-out \(role) session", token: callers.revoked[role], path: path, decodable: false,
                            expected: .unauthorized))
                }
                if allowed.contains("third_party") {
                    cells.append(
                        Cell(label: "(c) revoked API key", token: callers.revokedAPIKey, path: path, decodable: false, expected: .unauthorized))
                }
                // (d): the role is checked by each handler after the generated code has decoded the body and query,
                // so these get a body and the required query parameters that decode. (With an undecodable body a
                // caller of the wrong role gets the 400/422 first; that reveals nothing about anyone.)
                for role in Self.roles where !allowed.contains(role) {
                    cells.append(
                        Cell(
                            label: "(d) wrong role \(role)", token: callers.valid[role], path: path + operation.requiredQueryString,
                            decodable: true, expected: .forbidden))
                }
                // (e): each allowed caller, with ids that are not theirs.
                if !operation.pathParameters.isEmpty {
                    for role in allowed {
                        cells.append(
                            Cell(
                                label: "(e) another party's ids, as \(role)", token: callers.valid[role],
                                path: path + operation.requiredQueryString, decodable: true, expected: .notFound))
                    }
                    if allowed.contains("third_party") {
                        // What no key may call is refused before any id is looked at.
                        let sessionOnly = AuthenticationGate.sessionOnlyOperations.contains(operation.key)
                        cells.append(
                            Cell(
                                label: "(e) another party's ids, with an API key", token: callers.apiKey,
                                path: path + operation.requiredQueryString, decodable: true,
                                expected: sessionOnly ? .forbidden : .notFound))
                    }
                }
                // (f): a key on what only a session may do (manage keys, credentials, erasure), and a read-only
                // key on whatever changes something: 403 with a body that would otherwise be accepted.
                if allowed.contains("third_party") {
                    if AuthenticationGate.sessionOnlyOperations.contains(operation.key) {
                        cells.append(
                            Cell(
                                label: "(f) a full API key on a session-only operation", token: callers.apiKey,
                                path: path + operation.requiredQueryString, decodable: true, expected: .forbidden))
                    }
                    if operation.method != "GET", !AuthenticationGate.readOnlyExceptions.contains(operation.key) {
                        cells.append(
                            Cell(
                                label: "(f) a read-only API key on a change", token: callers.readOnlyAPIKey,
                                path: path + operation.requiredQueryString, decodable: true, expected: .forbidden))
                    }
                }
                for cell in cells {
                    let answer = try await Self.check(cell, of: operation, harness: harness, secrets: other.secrets)
                    checked[String(cell.label.prefix(3)), default: 0] += 1
                    guard cell.expected == .notFound else { continue }
                    // Someone else's id must get exactly the answer of an id that was never issued.
                    let unknownIDs = Dictionary(uniqueKeysWithValues: operation.pathParameters.map { ($0, UUID().uuidString.lowercased()) })
                    let unknown = Cell(
                        label: cell.label + ", compared with unknown ids", token: cell.token,
                        path: operation.path(with: unknownIDs) + operation.requiredQueryString, decodable: true, expected: .notFound)
                    let unknownAnswer = try await Self.check(unknown, of: operation, harness: harness, secrets: other.secrets)
                    #expect(
                        answer == unknownAnswer, "\(operation) \(cell.label): another party's id answered \(answer), an unknown one \(unknownAnswer)")
                }
                operationsChecked += 1
            }
            // Every protected operation got (a)–(c), and the public ones are few: a matrix that checked
            // almost nothing must not pass.
            #expect(operationsChecked >= 35, "only \(operationsChecked) operations need a token")
            #expect(checked["(a)"] == operationsChecked)
            #expect((checked["(b)"] ?? 0) >= operationsChecked && (checked["(c)"] ?? 0) > operationsChecked)
            #expect((checked["(d)"] ?? 0) >= 50, "\(checked)")
            #expect((checked["(e)"] ?? 0) >= Self.otherPartyIDs.count, "\(checked)")
            #expect((checked["(f)"] ?? 0) >= 15, "\(checked)")
        }
    }

    /// One request of the matrix and the status it must get.
    struct Cell {
        let label: String
        let token: String?
        let path: String
        /// The body (and query) the generated decoder accepts, or `{}` and no query.
        let decodable: Bool
        let expected: HTTPResponse.Status
    }

    /// Sends the cell's request and checks the answer; returns its status and body.
    @discardableResult
    static func check(_ cell: Cell, of operation: OpenAPIOperation, harness: TestHarness, secrets: [String]) async throws -> String {
        var headers: HTTPFields = [:]
        var payload: String?
        if let body = operation.body {
            headers[.contentType] = body.contentType
            payload = cell.decodable ? body.decodable : body.minimal
        }
        let method = try #require(HTTPRequest.Method(operation.method))
        let response = try await harness.request(method, cell.path, json: payload, token: cell.token, headers: headers)
        let text = harness.text(response)
        let cellName = "\(operation) \(cell.label): \(method) \(cell.path) answered \(response.status.code) \(text)"
        #expect(response.status == cell.expected, "expected \(cell.expected.code) — \(cellName)")
        #expect(response.headers[.contentType] == "application/problem+json", "not problem+json — \(cellName)")
        if let problem = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] {
            #expect(problem["status"] as? Int == response.status.code, "problem status — \(cellName)")
        } else {
            Issue.record("the body is not a JSON object — \(cellName)")
        }
        if cell.expected == .unauthorized {
            #expect(response.headers[.wwwAuthenticate] == "Bearer", "no WWW-Authenticate: Bearer — \(cellName)")
        }
        // What the caller sent (an id in the path) is no leak; anything else of the other party is.
        for secret in secrets where !secret.isEmpty && !cell.path.contains(secret) {
            #expect(!text.contains(secret), "leaks \(secret) — \(cellName)")
        }
        return "\(response.status.code) \(text)"
    }

    // MARK: The parties

    /// A person, a company (session and API key) and an auditor, each with a working, an expired and a
    /// logged-out session, and a revoked API key.
    static func callers(_ harness: TestHarness) async throws -> Callers {
        var callers = Callers()
        var person = TestHarness.Person()
        person.fiscalCode = TestHarness.uniqueFiscalCode()
        var company = TestHarness.Company()
        company.vatNumber = TestHarness.uniqueVATNumber()
        let auditorEmail = "auditor.\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let auditorPassword = "auditor-password-1"
        let hash = try await PasswordHasher().hash(auditorPassword)
        _ = try await harness.sql(
            "INSERT INTO accounts (role, email, password_hash, status, activated_at) VALUES ('auditor', '\(auditorEmail)', '\(hash)', 'active', now())"
        )
        // Auditors must have a second factor (else every auditor operation is 403 second-factor-required).
        try await harness.enrolDirectly(email: auditorEmail)
        callers.valid["user"] = try await harness.activeUser(person)
        callers.valid["third_party"] = try await harness.activeCompany(company)
        let logins = [
            ("user", person.email, person.password), ("third_party", company.email, company.password),
            ("auditor", auditorEmail, auditorPassword),
        ]
        for (role, email, password) in logins {
            if callers.valid[role] == nil { callers.valid[role] = try await harness.logIn(email: email, password: password) }
            // Expired: a real session whose expiry has passed (what SESSION_TTL leads to, without waiting for it).
            let expired = try await harness.logIn(email: email, password: password)
            let aged = try await harness.sql(
                "UPDATE sessions SET expires_at = now() - interval '1 second' WHERE token_hash = sha256(convert_to('\(expired)', 'UTF8')) RETURNING 1"
            )
            try #require(aged.count == 1, "the \(role) session to expire was not found")
            callers.expired[role] = expired
            let revoked = try await harness.logIn(email: email, password: password)
            let logout = try await harness.request(.delete, "/v1/sessions/current", token: revoked)
            try #require(logout.status == .noContent, "logout answered \(logout.status)")
            callers.revoked[role] = revoked
        }
        let thirdParty = try #require(callers.valid["third_party"])
        callers.apiKey = try await apiKey(harness, thirdParty).secret
        callers.readOnlyAPIKey = try await apiKey(harness, thirdParty, scope: "read_only").secret
        let revokedKey = try await apiKey(harness, thirdParty)
        let revoke = try await harness.request(.delete, "/v1/api-keys/\(revokedKey.id)", token: thirdParty)
        try #require(revoke.status == .noContent, "revoking the key answered \(revoke.status)")
        callers.revokedAPIKey = revokedKey.secret
        for (role, token) in callers.valid {
            let me = try await harness.request(.get, "/v1/me", token: token)
            try #require(me.status == .ok && (try harness.object(me)["role"] as? String) == role, "the \(role) caller cannot read /v1/me")
        }
        return callers
    }

    static func apiKey(_ harness: TestHarness, _ token: String, scope: String = "full") async throws -> (id: String, secret: String) {
        let response = try await harness.request(.post, "/v1/api-keys", json: #"{"name":"matrix","scope":"\#(scope)"}"#, token: token)
        try #require(response.status == .created, "creating an API key answered \(response.status): \(harness.text(response))")
        let key = try harness.object(response)
        return (try #require(key["id"] as? String), try #require(key["secret"] as? String))
    }

    /// Another company and person with distinctive identities, and one of each resource a path id can name.
    static func otherParty(_ harness: TestHarness) async throws -> OtherParty {
        var other = OtherParty()
        let person = TestHarness.Person(
            email: "ottavia.segreta.\(UUID().uuidString.prefix(8).lowercased())@example.com", fiscalCode: TestHarness.uniqueFiscalCode(),
            fullName: "Ottavia Segreta")
        var company = TestHarness.Company()
        company.email = "riservato.\(UUID().uuidString.prefix(8).lowercased())@example.com"
        company.vatNumber = TestHarness.uniqueVATNumber()
        company.companyName = "Riservatissima Analytics S.r.l."
        let personToken = try await harness.activeUser(person)
        let companyToken = try await harness.activeCompany(company)
        (other.personEmail, other.personFiscalCode, other.personName) = (person.email, person.fiscalCode, person.fullName)
        (other.companyEmail, other.companyName, other.companyVATNumber) = (company.email, company.companyName, company.vatNumber)
        other.personID = try await harness.accountID(personToken)
        other.companyID = try await harness.accountID(companyToken)
        let parties = RequestParties(
            company: companyToken, companyID: other.companyID, person: personToken, personID: other.personID,
            personEmail: person.email, personFiscalCode: person.fiscalCode)

        other.sampleValue = "123.25"
        try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: personToken, firstValue: 123.25)
        other.subscribedRequestID = try await harness.acceptedRequestID(parties, subscriptionDays: 30)
        other.pendingRequestID = try await harness.sentRequestID(parties)
        other.apiKeyID = try await apiKey(harness, companyToken).id

        var blocked = TestHarness.Company()
        blocked.vatNumber = TestHarness.uniqueVATNumber()
        other.blockedCompanyID = try await harness.accountID(try await harness.activeCompany(blocked))
        let block = try await harness.request(.put, "/v1/me/blocks/\(other.blockedCompanyID)", token: personToken)
        try #require(block.status == .ok, "blocking answered \(block.status): \(harness.text(block))")

        let export = try await harness.request(.get, "/v1/fhir/$export", token: companyToken)
        try #require(export.status == .accepted, "the bulk export answered \(export.status): \(harness.text(export))")
        other.bulkExportID = String(try #require(export.headers[.contentLocation]?.split(separator: "/").last))

        // A background import is a row like this once it ended (the import tests run real ones).
        let job = try await harness.sql(
            """
            INSERT INTO import_jobs (id, user_id, status, bytes_total, bytes_read, finished_at, result)
            VALUES (gen_random_uuid(), '\(other.personID)', 'succeeded', 100, 100, now(),
                    '{"stored":1,"alreadyThere":0,"repeatedInFile":0,"skipped":[],"invalid":{"count":0,"examples":[]}}')
            RETURNING id::text
            """)
        other.importJobID = try #require(try job.first?.decode(String.self))

        // k is small here (GroupFixtures.smallK): five more people make the group request accepted.
        _ = try await GroupFixtures.populate(harness, (0..<5).map { _ in GroupFixtures.Member(heartRate: [1: [70]]) })
        let group = try await harness.request(
            .post, "/v1/group-requests",
            json:
                #"{"types":["heart_rate"],"filters":[{"type":"heart_rate","min":0,"max":300}],"window":{"from":"2026-03-01","to":"2026-03-01"},"bucket":"day","purposeCode":"HRESCH","purpose":"Study","subscription":{"days":30}}"#,
            token: companyToken)
        try #require(group.status == .created, "the group request answered \(group.status): \(harness.text(group))")
        try #require(try harness.object(group)["status"] as? String == "accepted", "the group request was not accepted: \(harness.text(group))")
        other.groupRequestID = try #require(try harness.object(group)["id"] as? String)
        other.runID = try await RunFixtures.run(harness, organiser: companyToken)
        return other
    }
}
