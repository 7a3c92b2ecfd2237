import BrokerOpenAPI
import BrokerTestSupport
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// One running Data4Help server (real HTTP on a loopback port) on its own fresh database, with a mail
/// directory, plus the steps most tests share: register, read the activation mail, activate, log in.
struct TestHarness: Sendable {
    let client: any TestClientProtocol
    let databaseURL: DatabaseURL
    let mailDirectory: URL
    /// The server's loopback port, for a test that needs its own connection (a stream left open).
    var port = 0

    /// Builds the application exactly as `d4h serve` does, on a fresh migrated database.
    /// `noise` is the privacy module's noise source: the secure one unless a test injects another (a
    /// running server has no way to).
    static func run(
        configure: @Sendable (inout BrokerConfiguration) -> Void = { _ in },
        noise: any NoiseSource = SecureNoise(),
        expectedLogs: [ExpectedLog] = [],
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: @Sendable (TestHarness) async throws -> Void
    ) async throws {
        try await StallReport.step("a test database, its server and the test") {
            try await TestDatabase.withMigratedDatabase { url in
                try await run(
                    databaseURL: url, configure: configure, noise: noise, expectedLogs: expectedLogs, sourceLocation: sourceLocation, body)
            }
        }
    }

    static func run(
        databaseURL url: DatabaseURL,
        configure: @Sendable (inout BrokerConfiguration) -> Void = { _ in },
        noise: any NoiseSource = SecureNoise(),
        expectedLogs: [ExpectedLog] = [],
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: @Sendable (TestHarness) async throws -> Void
    ) async throws {
        // One mail directory per database, not per server: servers on one database share its outbox, and
        // any of them may send a mail another one's request wrote, as production instances do to one relay.
        // The first server of a database makes the directory and removes it when it stops.
        let mail = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-mail-\(Self.directoryName(of: url))")
        let madeHere = !FileManager.default.fileExists(atPath: mail.path)
        try FileManager.default.createDirectory(at: mail, withIntermediateDirectories: true)
        defer { if madeHere { try? FileManager.default.removeItem(at: mail) } }
        var configuration = BrokerConfiguration(
            databaseURL: url.text, httpHost: "127.0.0.1", httpPort: 0, publicURL: "http://127.0.0.1:8080",
            mailTransport: .file, mailDirectory: mail.path, logLevel: .warning)
        // Mails are sent by the delivery loop: soon after their event, so tests wait little for them.
        configuration.mailDelivery.pollInterval = .milliseconds(50)
        configuration.notificationInterval = .milliseconds(200)
        // A small pool, so a path that needs more connections than it should (or leases one while holding
        // another) shows up in every run rather than only under a production burst.
        configuration.database.poolSize = testPoolSize
        // Real Argon2id at a fraction of OWASP's cost (`PasswordHashingCostTests` keeps the product's default).
        configuration.passwordHashing = Self.passwordHashing
        // The nested-lease check, not a short wait, is what catches a lease taken inside a lease; a few
        // connections shared by concurrent requests on a loaded machine may take a while to come free.
        configuration.database.leaseTimeout = .seconds(60)
        // Peer statistics' background publishing would compute 400 days on every test's server: off, so a
        // test's peer figures are published when its own request (or the test itself) asks, after its data.
        configuration.peerStatisticsInterval = nil
        // The harness's client is one keep-alive connection, and many tests fill the database directly
        // between two requests; on a loaded machine that can take longer than the production idle timeout
        // (60 s), after which the server had closed the connection and the next request failed with "I/O on
        // closed channel". The idle timeout is not what those tests are about; tests of it set their own.
        configuration.httpIdleTimeout = 900
        // No audit checkpoints unless a test asks (AuditCheckpointTests set `auditSigningKey`): the publisher
        // verifies the whole chain and signs when a server starts, work no other test needs. (This was first
        // suspected of the suite's stalls; the stall was the harness waiting for ever for a server that had
        // stopped before it listened, which `LiveServer` now reports instead.)
        // Receipts are signed as a production server signs them: every grant and its end yield one.
        configuration.consentSigningKey = ConsentSigningKey.generate()
        configure(&configuration)
        // The server's warnings and errors are kept and read when the test ends (`ServerLog`), whether it
        // passed or not: an error line is a bug even when the test's own checks did not notice it.
        let log = ServerLog()
        // A server without a signing key says at start that auditors cannot detect a truncated log: what the
        // harness chose above, so expected unless the test set a key.
        let allowed =
            expectedLogs + (configuration.auditSigningKey == nil ? [ServerLog.noAuditCheckpoints] : [])
            + (configuration.consentSigningKey == nil ? [ServerLog.noConsentReceipts] : [])
        defer { log.check(allowing: allowed, sourceLocation: sourceLocation) }
        let app = try await StallReport.step("building the application") {
            try await buildApplication(configuration: configuration, logger: log.logger(level: configuration.logLevel), noise: noise)
        }
        try await StallReport.step("the server's whole life (start, test, shutdown)") {
            try await LiveServer.run(app) { port in
                try await StallReport.step("the test's body") {
                    try await PatientTestClient.withClient(port: port) { patient in
                        try await body(TestHarness(client: patient, databaseURL: url, mailDirectory: mail, port: port))
                    }
                }
            }
        }
    }

    /// A file name for the database `url` names (its text hashed: it holds a password).
    static func directoryName(of url: DatabaseURL) -> String {
        SHA256.hash(data: Data(url.text.utf8)).prefix(12).map { String(format: "%02x", $0) }.joined()
    }

    /// The test servers' Argon2id cost: 1 MiB and one pass instead of 19 MiB and two.
    static let passwordHashing: PasswordHasher.Parameters = {
        var parameters = PasswordHasher.Parameters()
        parameters.memoryKiB = 1024
        parameters.iterations = 1
        return parameters
    }()

    /// `D4H_TEST_POOL_SIZE` (default 3): the pool size of every test server.
    static let testPoolSize = ProcessInfo.processInfo.environment["D4H_TEST_POOL_SIZE"].flatMap { Int($0) } ?? 3

    // MARK: HTTP

    @discardableResult
    func request(
        _ method: HTTPRequest.Method, _ path: String, json: String? = nil, token: String? = nil,
        headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = extra
        if json != nil, headers[.contentType] == nil { headers[.contentType] = "application/json" }
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(
            uri: path, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
    }

    /// The response body as a JSON object (fails the test if it is not one).
    func object(_ response: TestResponse) throws -> [String: Any] {
        let data = Data(buffer: response.body)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "body: \(String(decoding: data, as: UTF8.self))")
    }

    /// The `field` names of a problem's `errors`.
    func errorFields(_ response: TestResponse) throws -> [String] {
        let errors = try object(response)["errors"] as? [[String: Any]] ?? []
        return errors.compactMap { $0["field"] as? String }
    }

    // MARK: Accounts

    struct Person: Sendable {
        var email = "laura.bianchi.\(UUID().uuidString.prefix(8).lowercased())@example.com"
        var password = "correct-horse-battery"
        var fiscalCode = "BNCLRA90A41F205I"
        var fullName = "Laura Bianchi"
        var birthDate = "1990-01-01"
        var sex = "F"

        /// The contract's type when the person is one the contract can express; a sex it cannot (a test of
        /// the server's refusal) is written by hand, as every body meant to be wrong is.
        var registrationJSON: String {
            guard let sex = Components.Schemas.Sex(rawValue: sex) else {
                return """
                    {"email":"\(email)","password":"\(password)","fiscalCode":"\(fiscalCode)","fullName":"\(fullName)","birthDate":"\(birthDate)","sex":"\(self.sex)"}
                    """
            }
            return Components.Schemas.UserRegistration(
                email: email, password: password, fiscalCode: fiscalCode, fullName: fullName, birthDate: birthDate, sex: sex
            ).contractJSON
        }
    }

    struct Company: Sendable {
        var email = "research.\(UUID().uuidString.prefix(8).lowercased())@example.com"
        var password = "company-password-1"
        var vatNumber = "12345678903"
        var companyName = "Cardio Research S.p.A."

        var registrationJSON: String {
            Components.Schemas.ThirdPartyRegistration(email: email, password: password, vatNumber: vatNumber, companyName: companyName)
                .contractJSON
        }
    }

    /// Registers, activates through the mailed token, and logs in; returns the session token.
    @discardableResult
    func activeUser(_ person: Person = Person()) async throws -> String {
        let response = try await request(.post, "/v1/users", json: person.registrationJSON)
        #expect(response.status == .accepted)
        try await activate(email: person.email)
        return try await logIn(email: person.email, password: person.password)
    }

    @discardableResult
    func activeCompany(_ company: Company = Company()) async throws -> String {
        let response = try await request(.post, "/v1/third-parties", json: company.registrationJSON)
        #expect(response.status == .accepted)
        try await activate(email: company.email)
        return try await logIn(email: company.email, password: company.password)
    }

    func activate(email: String, password: String? = nil) async throws {
        let token = try #require(try await activationToken(for: email))
        let response = try await request(.post, "/v1/activations", json: Components.Schemas.Activation(token: token, password: password).contractJSON)
        #expect(response.status == .ok)
    }

    /// Both steps when the account has a second factor (its code computed from the key in the database).
    func logIn(email: String, password: String) async throws -> String {
        var response = try await request(.post, "/v1/sessions", json: Components.Schemas.Credentials(email: email, password: password).contractJSON)
        if response.status == .ok, let challenge = try object(response)["secondFactorChallenge"] as? String {
            response = try await secondStep(challenge, code: try await currentCode(email: email))
        }
        try #require(response.status == .created, "login answered \(response.status)")
        return try #require(try object(response)["token"] as? String)
    }

    /// Every mail the server wrote, oldest first, once the outbox has sent what it holds: mails are written
    /// to the outbox with their event and sent by the delivery loop a moment later. Mails whose sending
    /// failed (retried later) are not waited for; nor is anything past 15 s, so a test of "no mail" ends.
    func mails() async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            let rows = try await sql("SELECT count(*) FROM mail_outbox WHERE status = 'pending' AND last_error IS NULL")
            if try rows.first?.decode(Int64.self) == 0 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try mailFiles()
    }

    /// The mail files as they are now.
    func mailFiles() throws -> [String] {
        guard FileManager.default.fileExists(atPath: mailDirectory.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(at: mailDirectory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "eml" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
            .map { try String(contentsOf: $0, encoding: .utf8) }
    }

    /// The activation token of the newest mail to `email`, read as a person would read it.
    func activationToken(for email: String) async throws -> String? {
        let mailed = try await mails().filter { $0.contains("To: <\(email.lowercased())>") }
            .compactMap { CapturingMailer.activationToken(in: $0.replacingOccurrences(of: "\r\n", with: "\n")) }
        // A new activation mail retires the account's earlier tokens, and mails may reach the sink in another
        // order than they were written: the live token is the one still stored unused. None is when the test
        // used it already (or means to show that a retired one fails): then the last mailed, as before.
        for token in mailed.reversed() {
            let hash = SecretToken(text: token).hash.map { String(format: "%02x", $0) }.joined()
            let live = try await int(
                "SELECT count(*) FROM activation_tokens WHERE token_hash = decode('\(hash)', 'hex') AND used_at IS NULL")
            if live == 1 { return token }
        }
        return mailed.last
    }

    /// The response body as text.
    func text(_ response: TestResponse) -> String {
        String(buffer: response.body)
    }

    /// Sends one request on a connection of its own (the harness's client is a single connection, on
    /// which the server handles requests one after the other); for requests that must really overlap.
    func requestOnNewConnection(
        _ method: HTTPRequest.Method, _ path: String, json: String? = nil, token: String? = nil
    ) async throws -> (status: HTTPResponse.Status, body: String) {
        var headers: HTTPFields = [:]
        if json != nil { headers[.contentType] = "application/json" }
        if let token { headers[.authorization] = "Bearer \(token)" }
        let response = try await sendOnNewConnection(method, path, headers: headers, body: json.map { ByteBuffer(string: $0) })
        return (response.status, response.body.map { String(buffer: $0) } ?? "")
    }

    /// One request on a connection of its own (for requests sent side by side, or a body big enough to
    /// hold up the shared connection), with the same 120 s read timeout as `PatientTestClient`.
    func sendOnNewConnection(
        _ method: HTTPRequest.Method, _ path: String, headers: HTTPFields = [:], body: ByteBuffer? = nil
    ) async throws -> TestClient.Response {
        let port = try #require(client.port)
        return try await TestClient.withClient(host: "127.0.0.1", port: port, configuration: .init(timeout: PatientTestClient.readTimeout)) {
            connection in
            try await PatientTestClient.execute(
                TestClient.Request(path, method: method, authority: "localhost", headers: headers, body: body), on: connection)
        }
    }

    /// A valid fiscal code for the default `Person` (born 1990-01-01, female) that no other call returns
    /// (random surname and name letters, with the check character recomputed).
    static func uniqueFiscalCode(birth: String = "90A41", place: String = "F205") -> String {
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        let first15 = String((0..<6).map { _ in letters.randomElement()! }) + birth + place
        return first15 + String(FiscalCode.checkCharacter(for: first15)!)
    }

    /// A valid partita IVA that no other call returns (random digits, check digit recomputed).
    static func uniqueVATNumber() -> String {
        let first10 = "1" + String((0..<9).map { _ in "0123456789".randomElement()! })
        return first10 + String(VATNumber.checkDigit(for: first10)!)
    }

    /// Parses an RFC 3339 time as the API writes it (with or without fractional seconds).
    static func date(_ text: Any?) -> Date? {
        guard let text = text as? String else { return nil }
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return plain.date(from: text) ?? fractional.date(from: text)
    }

    /// A valid fiscal code (random name letters, Milan) that agrees with `birthDate` (`YYYY-MM-DD`) and `sex`.
    static func uniqueFiscalCode(birthDate: String, sex: String) -> String {
        let parts = birthDate.split(separator: "-").map { Int($0)! }
        let month = Array("ABCDEHLMPRST")[parts[1] - 1]
        let day = parts[2] + (sex == "F" ? 40 : 0)
        let year = String(format: "%02d", parts[0] % 100)
        return uniqueFiscalCode(birth: "\(year)\(month)\(String(format: "%02d", day))")
    }

    // MARK: Health data

    /// `{"samples":[…]}` for (type, value, at) triples.
    static func samplesJSON(_ samples: [(type: String, value: Double, at: String)]) -> String {
        let items = samples.map { #"{"type":"\#($0.type)","value":\#($0.value),"at":"\#($0.at)"}"# }
        return #"{"samples":["# + items.joined(separator: ",") + "]}"
    }

    /// `POST /v1/me/samples` with a JSON body of (type, value, at) triples.
    @discardableResult
    func upload(_ samples: [(type: String, value: Double, at: String)], token: String?) async throws -> TestResponse {
        try await request(.post, "/v1/me/samples", json: Self.samplesJSON(samples), token: token)
    }

    /// `POST /v1/me/samples` with a CSV body.
    @discardableResult
    func uploadCSV(_ text: String, token: String?, contentType: String = "text/csv") async throws -> TestResponse {
        try await request(.post, "/v1/me/samples", json: text, token: token, headers: [.contentType: contentType])
    }

    /// The caller's account id (from `GET /v1/me`).
    func accountID(_ token: String) async throws -> String {
        let response = try await request(.get, "/v1/me", token: token)
        try #require(response.status == .ok)
        return try #require(try object(response)["id"] as? String)
    }

    /// A person inserted directly (active, no password): a peer for statistics. Returns the account id.
    @discardableResult
    func insertPerson(birthDate: String, sex: String) async throws -> String {
        let email = "peer.\(UUID().uuidString.prefix(12).lowercased())@example.com"
        let code = Self.uniqueFiscalCode(birthDate: birthDate, sex: sex)
        let row = try #require(
            try await sql(
                """
                WITH account AS (
                    INSERT INTO accounts (role, email, status, activated_at) VALUES ('user', '\(email)', 'active', now()) RETURNING id
                )
                INSERT INTO users (account_id, fiscal_code, full_name, birth_date, sex)
                SELECT id, '\(code)', 'Peer', '\(birthDate)', '\(sex)' FROM account RETURNING account_id::text
                """
            ).first)
        return try row.decode(String.self)
    }

    /// An active auditor inserted directly (as `d4h auditors add` plus activation and enrolling a second
    /// factor would leave it), logged in with both steps.
    func activeAuditor() async throws -> String {
        let (email, password) = try await unenrolledAuditor()
        try await enrolDirectly(email: email)
        return try await logIn(email: email, password: password)
    }

    /// An active auditor inserted directly, without a second factor (they can do nothing but enrol).
    func unenrolledAuditor() async throws -> (email: String, password: String) {
        let email = "auditor.\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let password = "auditor-password-1"
        let hash = try await PasswordHasher(parameters: Self.passwordHashing).hash(password)
        _ = try await sql(
            "INSERT INTO accounts (role, email, password_hash, status, activated_at) VALUES ('auditor', '\(email)', '\(hash)', 'active', now())")
        return (email, password)
    }

    // MARK: Database

    /// The first column of the first row of `text`, as an integer (`SELECT count(*) …`).
    func int(_ text: String) async throws -> Int {
        let row = try #require(try await sql(text).first, "no row from \(text)")
        return Int(try row.decode(Int64.self))
    }

    /// The first column of the first row of `text`, as a boolean (NULL reads as false).
    func bool(_ text: String) async throws -> Bool {
        let row = try #require(try await sql(text).first, "no row from \(text)")
        return try row.decode(Bool?.self) ?? false
    }

    /// Runs a statement on this test's database (to age a token, read the audit log, …).
    func sql(_ text: String) async throws -> [PostgresRow] {
        try await StallReport.step("SQL: \(text.prefix(60))") {
            try await TestDatabase.withClient(databaseURL) { client in
                try await client.query(PostgresQuery(unsafeSQL: text), logger: TestDatabase.logger).collect()
            }
        }
    }
}
