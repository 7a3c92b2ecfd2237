import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import NIOPosix
import Testing

@Suite("HTTP errors")
struct HTTPErrorTests {
    /// Checks the shape every error answer shares: an RFC 9457 document with the status it was sent with.
    private func expectProblem(
        _ response: TestResponse, _ status: HTTPResponse.Status, _ harness: TestHarness,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.headers[.contentType] == "application/problem+json", sourceLocation: sourceLocation)
        let problem = try harness.object(response)
        #expect((problem["type"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
        #expect((problem["title"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
        #expect(problem["status"] as? Int == Int(status.code), sourceLocation: sourceLocation)
        #expect((problem["detail"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
    }

    @Test("an unknown path is a 404 problem document", arguments: ["/v1/nothing-here", "/nothing-here", "/v1/users/123"])
    func unknownRoute(_ path: String) async throws {
        try await TestHarness.run { harness in
            try expectProblem(try await harness.request(.get, path), .notFound, harness)
        }
    }

    @Test(
        "a method a known path does not accept is a 405 with Allow",
        arguments: [
            (HTTPRequest.Method.put, "/v1/users", ["POST", "OPTIONS"]),
            (.get, "/v1/activations", ["POST", "OPTIONS"]),
            (.patch, "/v1/api-keys", ["GET", "HEAD", "POST", "OPTIONS"]),
            (.post, "/v1/me", ["GET", "HEAD", "PATCH", "DELETE", "OPTIONS"]),
        ])
    func methodNotAllowed(method: HTTPRequest.Method, path: String, allowed: [String]) async throws {
        try await TestHarness.run { harness in
            let response = try await harness.request(method, path, json: method == .get ? nil : "{}")
            try expectProblem(response, .methodNotAllowed, harness)
            let allow = try #require(response.headers[.allow])
            let methods = Set(allow.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(methods == Set(allowed))
        }
    }

    @Test("HEAD answers like GET without a body; OPTIONS lists the path's methods")
    func headAndOptionsOnKnownPath() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let head = try await harness.request(.head, "/v1/me", token: token)
            #expect(head.status == .ok, "HEAD: \(head.status)")
            #expect(head.body.readableBytes == 0)
            #expect(try await harness.request(.head, "/v1/me").status == .unauthorized)
            let options = try await harness.request(.options, "/v1/me")
            #expect(options.status == .noContent, "OPTIONS: \(options.status)")
            let allow = Set((options.headers[.allow] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(allow == ["GET", "HEAD", "PATCH", "DELETE", "OPTIONS"])
        }
    }

    @Test(
        "a body that is not JSON is a 400",
        arguments: [
            ("/v1/sessions", #"{"email":"#), ("/v1/sessions", "email=a&password=b"), ("/v1/activations", "{'token': 'x'}"),
        ])
    func malformedJSON(path: String, body: String) async throws {
        try await TestHarness.run { harness in
            try expectProblem(try await harness.request(.post, path, json: body), .badRequest, harness)
        }
    }

    @Test("a body that is not application/json is a 415", arguments: ["text/plain", "application/xml", "application/x-www-form-urlencoded"])
    func unsupportedMediaType(_ contentType: String) async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let response = try await harness.request(
                .post, "/v1/users", json: person.registrationJSON, headers: [.contentType: contentType])
            try expectProblem(response, .unsupportedMediaType, harness)
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 0)
        }
    }

    @Test("a body over 16 MiB with a Content-Length is a 413")
    func bodyTooLargeWithLength() async throws {
        try await TestHarness.run { harness in
            var body = ByteBuffer(string: #"{"email":"a@example.com","password":""#)
            body.writeRepeatingByte(UInt8(ascii: "x"), count: 16 * 1024 * 1024)
            body.writeString(#""}"#)
            let response = try await harness.sendOnNewConnection(.post, "/v1/sessions", headers: [.contentType: "application/json"], body: body)
            #expect(response.status == .contentTooLarge)
            #expect(response.headers[.contentType] == "application/problem+json")
            let problem = try JSONSerialization.jsonObject(with: Data(buffer: try #require(response.body))) as? [String: Any]
            #expect(problem?["status"] as? Int == 413)
            #expect(try await harness.int("SELECT count(*) FROM login_throttle") == 0)
        }
    }

    @Test("a body of exactly 16 MiB is still read")
    func bodyAtTheLimit() async throws {
        try await TestHarness.run { harness in
            let prefix = #"{"email":"a@example.com","password":""#
            let suffix = #""}"#
            var body = ByteBuffer(string: prefix)
            body.writeRepeatingByte(UInt8(ascii: "x"), count: 16 * 1024 * 1024 - prefix.utf8.count - suffix.utf8.count)
            body.writeString(suffix)
            #expect(body.readableBytes == 16 * 1024 * 1024)
            let response = try await harness.sendOnNewConnection(.post, "/v1/sessions", headers: [.contentType: "application/json"], body: body)
            #expect(response.status == .unauthorized)
        }
    }

    @Test("a chunked body (no Content-Length) that grows over 16 MiB is a 413")
    func bodyTooLargeChunked() async throws {
        try await TestHarness.run { harness in
            let port = try #require(harness.client.port)
            let head = try await Self.rawChunkedPost(port: port, path: "/v1/sessions", bytes: 17 * 1024 * 1024)
            #expect(head.hasPrefix("HTTP/1.1 413"), "\(head)")
            #expect(head.lowercased().contains("content-type: application/problem+json"), "\(head)")
        }
    }

    @Test("every /v1 answer carries Cache-Control: no-store and X-Content-Type-Options: nosniff, and is compact JSON")
    func securityHeaders() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            var responses: [(String, TestResponse)] = []
            responses.append(("202 registration", try await harness.request(.post, "/v1/users", json: person.registrationJSON)))
            let token = try #require(try await harness.activationToken(for: person.email))
            responses.append(("200 activation", try await harness.request(.post, "/v1/activations", json: #"{"token":"\#(token)"}"#)))
            responses.append(
                (
                    "201 login",
                    try await harness.request(
                        .post, "/v1/sessions", json: #"{"email":"\#(person.email)","password":"\#(person.password)"}"#)
                ))
            let session = try #require(try harness.object(responses.last!.1)["token"] as? String)
            responses.append(("200 me", try await harness.request(.get, "/v1/me", token: session)))
            responses.append(("401", try await harness.request(.get, "/v1/me")))
            responses.append(("403", try await harness.request(.get, "/v1/api-keys", token: session)))
            responses.append(("404", try await harness.request(.get, "/v1/nothing-here")))
            responses.append(("405", try await harness.request(.put, "/v1/users", json: "{}")))
            responses.append(("400", try await harness.request(.post, "/v1/sessions", json: "{")))
            responses.append(("415", try await harness.request(.post, "/v1/sessions", json: "{}", headers: [.contentType: "text/plain"])))
            responses.append(("202 registration again", try await harness.request(.post, "/v1/users", json: person.registrationJSON)))
            responses.append(("422", try await harness.request(.patch, "/v1/me", json: #"{"email":"x@example.com"}"#, token: session)))
            responses.append(("204 logout", try await harness.request(.delete, "/v1/sessions/current", token: session)))
            let nosniff = HTTPField.Name("X-Content-Type-Options")!
            for (label, response) in responses {
                #expect(response.headers[.cacheControl] == "no-store", "\(label): \(response.status)")
                #expect(response.headers[nosniff] == "nosniff", "\(label): \(response.status)")
                // Compact JSON, answers and problems alike: `sed 's/.*"token":"\([^"]*\)".*/\1/'` in a shell
                // script works on them (the README's walk-through does that), and no byte is spent on layout.
                let body = harness.text(response)
                #expect(!body.contains("\n") && !body.contains("\" : "), "\(label): \(body)")
            }
            #expect(harness.text(responses[2].1).contains(#""token":""#))
        }
    }

    @Test("no error answer shows SQL, database errors or a stack trace, and none is an empty 500")
    func noInternalsInErrors() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let long = String(repeating: "é", count: 5000)
            // A repeated registration is no error any more: it answers the 202 of a new one (RegistrationOracleTests).
            let attempts: [(HTTPRequest.Method, String, String?, String?)] = [
                (.post, "/v1/users", #"{"email":"'; DROP TABLE accounts; --@example.com","password":"x"}"#, nil),
                (
                    .post, "/v1/users",
                    #"{"email":"\#(long)@example.com","password":"\#(long)","fiscalCode":"\#(long)","fullName":"\#(long)","birthDate":"\#(long)","sex":"F"}"#,
                    nil
                ),
                (
                    .post, "/v1/third-parties",
                    #"{"email":"c@example.com","password":"company-password-1","vatNumber":"1e10","companyName":"\u0000"}"#, nil
                ),
                (.post, "/v1/activations", #"{"token":"d4ha_' OR 1=1 --"}"#, nil),
                (.post, "/v1/sessions", #"{"email":"' OR '1'='1","password":"' OR '1'='1"}"#, nil),
                (.post, "/v1/sessions", #"{"email":12,"password":[]}"#, nil),
                (.patch, "/v1/me", #"{"fullName":"\u0000"}"#, token),
                (.patch, "/v1/me", #"{"description":"x"}"#, token),
                (.delete, "/v1/me", #"{"password":null}"#, token),
                (.get, "/v1/api-keys?limit=abc", nil, token),
                (.delete, "/v1/api-keys/'%20OR%201=1", nil, token),
                (.get, "/v1/me", nil, "d4hs_" + String(repeating: "%", count: 100)),
            ]
            for (method, path, json, bearer) in attempts {
                let response = try await harness.request(method, path, json: json, token: bearer)
                let body = harness.text(response)
                let label = "\(method) \(path) → \(response.status)"
                #expect(response.status.code >= 400, "\(label)")
                #expect(response.status != .internalServerError, "\(label): \(body)")
                #expect(!body.isEmpty, "\(label)")
                #expect(response.headers[.contentType] == "application/problem+json", "\(label)")
                for needle in ["PSQLError", "SELECT", "INSERT", "postgres", "sqlState", ".swift:", "Fatal error", "Stack"] {
                    #expect(!body.localizedCaseInsensitiveContains(needle), "\(label) shows \(needle): \(body)")
                }
            }
        }
    }

    @Test("a login whose email contains a NUL character is refused like other wrong credentials, not with a 500")
    func nulInLoginEmail() async throws {
        try await TestHarness.run { harness in
            let response = try await harness.request(
                .post, "/v1/sessions", json: #"{"email":"laura\u0000@example.com","password":"correct-horse-battery"}"#)
            #expect(response.status == .unauthorized, "\(response.status): \(harness.text(response))")
        }
    }

    @Test("a text value PostgreSQL cannot store (a NUL in a name) is a 422, not a 500")
    func nulInStoredText() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let response = try await harness.request(.patch, "/v1/me", json: #"{"fullName":"Laura\u0000Bianchi"}"#, token: token)
            #expect(response.status == .unprocessableContent, "\(response.status): \(harness.text(response))")
        }
    }

    @Test("a password longer than any valid one is a plain 401 on login, and the real password still works")
    func overlongLoginPassword() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            let long = String(repeating: "x", count: 100_000)
            let response = try await harness.request(.post, "/v1/sessions", json: #"{"email":"\#(person.email)","password":"\#(long)"}"#)
            #expect(response.status == .unauthorized)
            _ = try await harness.logIn(email: person.email, password: person.password)
        }
    }

    @Test("HEAD is framed as its GET: the known length, or chunked for a stream, and a download's HEAD releases nothing")
    func headFramedLikeGet() async throws {
        try await TestHarness.run { harness in
            let port = try #require(harness.client.port)
            let parties = try await harness.requestParties()
            let at = ["2026-03-01T08:00:00Z", "2026-03-01T08:01:00Z", "2026-03-01T08:02:00Z"]
            #expect(try await harness.upload(at.map { (type: "heart_rate", value: 70, at: $0) }, token: parties.person).status == .ok)
            let id = try await harness.acceptedRequestID(parties, types: ["heart_rate"])

            // A body of known length: the HEAD names the GET's Content-Length, and sends no byte of it.
            let profile = try await harness.request(.get, "/v1/me", token: parties.person)
            let profileHead = try await Self.rawHead(port: port, path: "/v1/me", token: parties.person)
            #expect(profileHead.head.hasPrefix("HTTP/1.1 200"), "\(profileHead.head)")
            #expect(Self.header("content-length", in: profileHead.head) == String(profile.body.readableBytes), "\(profileHead.head)")
            #expect(profileHead.bodyBytes == 0)

            let accessLog = { try await harness.object(harness.request(.get, "/v1/me/access-log", token: parties.person))["items"] as? [Any] }
            let logged = try await accessLog()?.count

            // A streamed download: no length is known before it is written, so none is claimed (it was
            // `Content-Length: 0`, telling the client the release was empty), and nothing after the head.
            for (format, coding) in [("csv", nil), ("ndjson", "zstd")] as [(String, String?)] {
                let path = "/v1/single-requests/\(id)/data?format=\(format)"
                let head = try await Self.rawHead(port: port, path: path, token: parties.company, acceptEncoding: coding)
                #expect(head.head.hasPrefix("HTTP/1.1 200"), "\(head.head)")
                #expect(Self.header("content-length", in: head.head) == nil, "\(format): \(head.head)")
                #expect(Self.header("transfer-encoding", in: head.head) == "chunked", "\(format): \(head.head)")
                #expect(Self.header("content-encoding", in: head.head) == coding, "\(format): \(head.head)")
                #expect(Self.header("data4help-next-cursor", in: head.head) != nil, "\(format): \(head.head)")
                #expect(head.bodyBytes == 0, "\(format)")
            }
            // The HEADs released nothing: the person's access log did not grow (a HEAD that ran the GET's body
            // would be recorded as a release, though no byte of it was sent). The GET then is.
            #expect(try await accessLog()?.count == logged)
            let csv = try await harness.request(.get, "/v1/single-requests/\(id)/data?format=csv", token: parties.company)
            #expect(csv.status == .ok)
            #expect(harness.text(csv).split(whereSeparator: \.isNewline).count == 1 + at.count, "\(harness.text(csv))")
            #expect(try await accessLog()?.count ?? 0 > logged ?? 0)
        }
    }

    /// The value of one header in a raw response head (names compared without case), or nil.
    static func header(_ name: String, in head: String) -> String? {
        for line in head.split(separator: "\r\n").dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    /// Sends a HEAD with `Connection: close` on a connection of its own and reads to the end: the response
    /// head as text, and how many bytes followed it (a HEAD must have none).
    static func rawHead(port: Int, path: String, token: String? = nil, cookie: String? = nil, acceptEncoding: String? = nil) async throws
        -> (head: String, bodyBytes: Int)
    {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var request = "HEAD \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
            if let token { request += "Authorization: Bearer \(token)\r\n" }
            if let cookie { request += "Cookie: \(cookie)\r\n" }
            if let acceptEncoding { request += "Accept-Encoding: \(acceptEncoding)\r\n" }
            try await outbound.write(ByteBuffer(string: request + "\r\n"))
            var received = ""
            for try await buffer in inbound { received += String(buffer: buffer) }
            guard let end = received.range(of: "\r\n\r\n") else { return (received, 0) }
            return (String(received[..<end.lowerBound]), received.utf8.count - received.utf8.distance(from: received.startIndex, to: end.upperBound))
        }
    }

    // MARK: Raw HTTP

    /// Sends a POST whose body is `bytes` of JSON-ish filler in chunked transfer encoding (no Content-Length),
    /// and returns the response head as text. Stops writing as soon as the server answers.
    static func rawChunkedPost(port: Int, path: String, bytes: Int) async throws -> String {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await withThrowingTaskGroup(of: String?.self) { group in
                group.addTask {
                    var received = ""
                    for try await buffer in inbound {
                        received += String(buffer: buffer)
                        if let end = received.range(of: "\r\n\r\n") { return String(received[..<end.lowerBound]) }
                    }
                    return received
                }
                group.addTask {
                    let head =
                        "POST \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n"
                    try? await outbound.write(ByteBuffer(string: head))
                    let chunkSize = 64 * 1024
                    var chunk = ByteBuffer(string: String(chunkSize, radix: 16) + "\r\n")
                    chunk.writeRepeatingByte(UInt8(ascii: "x"), count: chunkSize)
                    chunk.writeString("\r\n")
                    var sent = 0
                    while sent < bytes {
                        do { try await outbound.write(chunk) } catch { return nil }
                        sent += chunkSize
                    }
                    try? await outbound.write(ByteBuffer(string: "0\r\n\r\n"))
                    return nil
                }
                var head = ""
                while let result = try await group.next() {
                    if let result {
                        head = result
                        group.cancelAll()
                        break
                    }
                }
                return head
            }
        }
    }
}
