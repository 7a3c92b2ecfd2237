import AsyncHTTPClient
import BrokerTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOSSL
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// `d4h serve` terminating TLS itself, with a self-signed certificate made by `openssl` for each test.
@Suite("TLS", .serialized)
struct TLSTests {
    /// A PEM certificate and key in a temporary directory (removed by `remove()`).
    struct CertificateFiles {
        let directory: URL
        var certificate: URL { directory.appendingPathComponent("certificate.pem") }
        var key: URL { directory.appendingPathComponent("key.pem") }
        var files: TLSFiles { TLSFiles(certificatePath: certificate.path, keyPath: key.path) }
        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// A self-signed P-256 certificate for `localhost` and 127.0.0.1, valid for a day.
    static func makeCertificate() async throws -> CertificateFiles {
        let files = CertificateFiles(directory: FileManager.default.temporaryDirectory.appendingPathComponent("d4h-tls-\(UUID().uuidString)"))
        try FileManager.default.createDirectory(at: files.directory, withIntermediateDirectories: true)
        try await openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-days", "1",
            "-keyout", files.key.path, "-out", files.certificate.path,
        ])
        return files
    }

    static func openssl(_ arguments: [String]) async throws {
        let run = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["openssl"] + arguments)
        guard run.status == 0 else { throw TestSetupError("openssl \(arguments.first ?? "") failed: \(run.output)") }
    }

    /// Runs the application over TLS with `files` on a fresh database; `body` gets the port.
    static func serveTLS(_ files: CertificateFiles, _ body: @Sendable @escaping (Int) async throws -> Void) async throws {
        try await TestDatabase.withMigratedDatabase { url in
            let configuration = BrokerConfiguration(
                databaseURL: url.text, httpHost: "127.0.0.1", httpPort: 0, mailTransport: .log, logLevel: .warning, tls: files.files)
            let log = ServerLog()
            defer { log.check(allowing: [ServerLog.noAuditCheckpoints, ServerLog.noConsentReceipts]) }
            let app = try await buildApplication(configuration: configuration, logger: log.logger(level: configuration.logLevel))
            // The checks use HTTPS clients of their own.
            try await LiveServer.run(app) { port in try await body(port) }
        }
    }

    /// GET `path` over HTTPS, trusting only the test's certificate, with the TLS versions given.
    static func get(
        _ path: String, port: Int, trusting files: CertificateFiles, minimum: TLSVersion = .tlsv12, maximum: TLSVersion? = nil
    ) async throws -> HTTPClientResponse {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(files.certificate.path))
        tls.minimumTLSVersion = minimum
        tls.maximumTLSVersion = maximum
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        // A refused handshake would be retried until the connect timeout before it is reported: report it at
        // once instead, and give a real handshake on a loaded machine (the full suite on 2 cores) ample time.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(15)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let response = try await client.execute(HTTPClientRequest(url: "https://localhost:\(port)\(path)"), timeout: .seconds(20))
            _ = try await response.body.collect(upTo: 1 << 20)
            try await client.shutdown()
            return response
        } catch {
            try await client.shutdown()
            throw error
        }
    }

    @Test("over TLS 1.2 (and newer) the API answers, verified against its certificate, and every answer carries HSTS")
    func servesTLSWithHSTS() async throws {
        let files = try await Self.makeCertificate()
        defer { files.remove() }
        try await Self.serveTLS(files) { (port: Int) async throws in
            let live = try await Self.get("/health/live", port: port, trusting: files, minimum: .tlsv12, maximum: .tlsv12)
            #expect(live.status == .ok)
            #expect(live.headers.first(name: "Strict-Transport-Security") == "max-age=31536000")
            let problem = try await Self.get("/v1/me", port: port, trusting: files)
            #expect(problem.status == .unauthorized)
            #expect(problem.headers.first(name: "Strict-Transport-Security") == "max-age=31536000")
            #expect(problem.headers.first(name: "X-Content-Type-Options") == "nosniff")
        }
    }

    @Test("a client that speaks at most TLS 1.1 cannot complete the handshake")
    func refusesTLS11() async throws {
        let files = try await Self.makeCertificate()
        defer { files.remove() }
        try await Self.serveTLS(files) { (port: Int) async throws in
            // The same server answers a TLS 1.2 client, so the refusal below is the version, not the setup.
            #expect(try await Self.get("/health/live", port: port, trusting: files).status == .ok)
            do {
                let response = try await Self.get("/health/live", port: port, trusting: files, minimum: .tlsv1, maximum: .tlsv11)
                Issue.record("a TLS 1.1 client got an answer: \(response.status)")
            } catch {
                #expect(error is NIOSSLError || error is BoringSSLError, "\(String(reflecting: error))")
            }
        }
    }

    @Test("served as plain HTTP, no response carries HSTS")
    func plainHTTPHasNoHSTS() async throws {
        try await TestHarness.run { harness in
            for path in ["/health/live", "/v1/me", "/v1/nothing-here"] {
                let response = try await harness.request(.get, path)
                #expect(response.headers[.strictTransportSecurity] == nil, "\(path)")
                #expect(response.headers[.xContentTypeOptions] == "nosniff", "\(path)")
            }
        }
    }

    @Test("TLS_CERTIFICATE and TLS_KEY: both or neither; one alone is an error naming the other")
    func bothOrNeither() throws {
        func read(_ environment: [String: String]) throws -> BrokerConfiguration {
            try BrokerConfiguration(reader: ConfigReaderForTests.environment(environment))
        }
        #expect(try read([:]).tls == nil)
        #expect(try read([:]).publicURL == "http://127.0.0.1:8080")
        let both = try read(["TLS_CERTIFICATE": "/etc/d4h/cert.pem", "TLS_KEY": "/etc/d4h/key.pem"])
        #expect(both.tls == TLSFiles(certificatePath: "/etc/d4h/cert.pem", keyPath: "/etc/d4h/key.pem"))
        #expect(both.publicURL == "https://127.0.0.1:8080")
        let noKey = #expect(throws: ConfigurationError.self) { try read(["TLS_CERTIFICATE": "/etc/d4h/cert.pem"]) }
        #expect(noKey.map { "\($0)".hasPrefix("TLS_KEY is not set") } == true, "\(String(describing: noKey))")
        let noCertificate = #expect(throws: ConfigurationError.self) { try read(["TLS_KEY": "/etc/d4h/key.pem"]) }
        #expect(noCertificate.map { "\($0)".hasPrefix("TLS_CERTIFICATE is not set") } == true, "\(String(describing: noCertificate))")
    }

    @Test("an unreadable certificate or a key of another certificate is refused at start, naming the variable")
    func badFiles() async throws {
        let files = try await Self.makeCertificate()
        defer { files.remove() }
        #expect(try files.files.serverConfiguration().minimumTLSVersion == .tlsv12)

        let missing = TLSFiles(certificatePath: files.directory.appendingPathComponent("nope.pem").path, keyPath: files.key.path)
        let unreadable = #expect(throws: ConfigurationError.self) { try missing.serverConfiguration() }
        #expect(unreadable.map { "\($0)".hasPrefix("TLS_CERTIFICATE cannot be read") } == true, "\(String(describing: unreadable))")

        let other = try await Self.makeCertificate()
        defer { other.remove() }
        let mismatched = TLSFiles(certificatePath: files.certificate.path, keyPath: other.key.path)
        let error = #expect(throws: ConfigurationError.self) { try mismatched.serverConfiguration() }
        #expect(error.map { "\($0)".hasPrefix("TLS_KEY does not fit TLS_CERTIFICATE") } == true, "\(String(describing: error))")
    }

    @Test("`d4h serve --tls-certificate` without `--tls-key` refuses to start with a message saying so")
    func cliNeedsBoth() async throws {
        let files = try await Self.makeCertificate()
        defer { files.remove() }
        let run = try await D4HCommand.run(
            ["serve", "--http-port", "0", "--tls-certificate", files.certificate.path],
            environment: ["DATABASE_URL": "postgres://nobody@127.0.0.1:1/none", "MAIL_TRANSPORT": "log", "TLS_KEY": ""])
        #expect(run.status != 0)
        #expect(run.output.contains("TLS_KEY is not set"), "\(run.output)")
        #expect(run.output.contains("--tls-key"), "\(run.output)")
    }
}
