import Broker
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import Testing

/// One running Data4Help server (real HTTP on a loopback port) on its own fresh database, with a mail
/// directory, plus the steps most tests share: register, read the activation mail, activate, log in.
struct TestHarness: Sendable {
    let client: any TestClientProtocol
    let databaseURL: DatabaseURL
    let mailDirectory: URL

    /// Builds the application exactly as `d4h serve` does, on a fresh migrated database.
    static func run(
        configure: @Sendable (inout BrokerConfiguration) -> Void = { _ in },
        _ body: @Sendable (TestHarness) async throws -> Void
    ) async throws {
        try await TestDatabase.withMigratedDatabase { url in
            try await run(databaseURL: url, configure: configure, body)
        }
    }

    static func run(
        databaseURL url: DatabaseURL,
        configure: @Sendable (inout BrokerConfiguration) -> Void = { _ in },
        _ body: @Sendable (TestHarness) async throws -> Void
    ) async throws {
        let mail = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-mail-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: mail) }
        var configuration = BrokerConfiguration(
            databaseURL: url.text, httpHost: "127.0.0.1", httpPort: 0, publicURL: "http://127.0.0.1:8080",
            mailTransport: .file, mailDirectory: mail.path, logLevel: .error)
        configure(&configuration)
        let app = try await buildApplication(configuration: configuration)
        try await app.test(.live) { client in
            try await body(TestHarness(client: client, databaseURL: url, mailDirectory: mail))
        }
    }

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

        var registrationJSON: String {
            """
            {"email":"\(email)","password":"\(password)","fiscalCode":"\(fiscalCode)","fullName":"\(fullName)","birthDate":"\(birthDate)","sex":"\(sex)"}
            """
        }
    }

    struct Company: Sendable {
        var email = "research.\(UUID().uuidString.prefix(8).lowercased())@example.com"
        var password = "company-password-1"
        var vatNumber = "12345678903"
        var companyName = "Cardio Research S.p.A."

        var registrationJSON: String {
            """
            {"email":"\(email)","password":"\(password)","vatNumber":"\(vatNumber)","companyName":"\(companyName)"}
            """
        }
    }

    /// Registers, activates through the mailed token, and logs in; returns the session token.
    @discardableResult
    func activeUser(_ person: Person = Person()) async throws -> String {
        let response = try await request(.post, "/v1/users", json: person.registrationJSON)
        #expect(response.status == .created)
        try await activate(email: person.email)
        return try await logIn(email: person.email, password: person.password)
    }

    @discardableResult
    func activeCompany(_ company: Company = Company()) async throws -> String {
        let response = try await request(.post, "/v1/third-parties", json: company.registrationJSON)
        #expect(response.status == .created)
        try await activate(email: company.email)
        return try await logIn(email: company.email, password: company.password)
    }

    func activate(email: String, password: String? = nil) async throws {
        let token = try #require(try activationToken(for: email))
        let body = password.map { #"{"token":"\#(token)","password":"\#($0)"}"# } ?? #"{"token":"\#(token)"}"#
        let response = try await request(.post, "/v1/activations", json: body)
        #expect(response.status == .ok)
    }

    func logIn(email: String, password: String) async throws -> String {
        let response = try await request(.post, "/v1/sessions", json: #"{"email":"\#(email)","password":"\#(password)"}"#)
        try #require(response.status == .created, "login answered \(response.status)")
        return try #require(try object(response)["token"] as? String)
    }

    /// Every mail the server wrote, oldest first.
    func mails() throws -> [String] {
        guard FileManager.default.fileExists(atPath: mailDirectory.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(at: mailDirectory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "eml" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
            .map { try String(contentsOf: $0, encoding: .utf8) }
    }

    /// The activation token of the newest mail to `email`, read as a person would read it.
    func activationToken(for email: String) throws -> String? {
        try mails().last { $0.contains("To: <\(email.lowercased())>") }
            .flatMap { CapturingMailer.activationToken(in: $0.replacingOccurrences(of: "\r\n", with: "\n")) }
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
        let port = try #require(client.port)
        return try await TestClient.withClient(host: "127.0.0.1", port: port) { connection in
            var headers: HTTPFields = [:]
            if json != nil { headers[.contentType] = "application/json" }
            if let token { headers[.authorization] = "Bearer \(token)" }
            let response = try await connection.execute(
                TestClient.Request(path, method: method, authority: "localhost", headers: headers,
                                   body: json.map { ByteBuffer(string: $0) }))
            return (response.status, response.body.map { String(buffer: $0) } ?? "")
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
        try await TestDatabase.withClient(databaseURL) { client in
            try await client.query(PostgresQuery(unsafeSQL: text), logger: TestDatabase.logger).collect()
        }
    }
}
