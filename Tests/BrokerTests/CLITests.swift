import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// The `d4h` executable, run as an operator would run it.
@Suite("d4h command line")
struct CLITests {
    @Test("`d4h serve` refuses to start on a database whose schema is behind, saying what to do")
    func serveRefusesStaleSchema() async throws {
        try await TestDatabase.withEmptyDatabase { url in
            let run = try await D4HCommand.run(
                ["serve", "--http-port", "0"], environment: ["DATABASE_URL": url.text, "MAIL_TRANSPORT": "log"])
            #expect(run.status != 0)
            #expect(run.output.contains("refusing to start"))
            #expect(run.output.contains("d4h migrate"))
        }
    }

    @Test("a `d4h serve` flag wins over its environment variable")
    func serveFlagWinsOverEnvironment() async throws {
        try await TestDatabase.withEmptyDatabase { url in
            // The environment names a database nobody listens for; the flag names the (empty) test database.
            let run = try await D4HCommand.run(
                ["serve", "--database-url", url.text, "--http-port=0"],
                environment: ["DATABASE_URL": "postgres://nobody:nothing@127.0.0.1:1/none", "MAIL_TRANSPORT": "log"])
            #expect(run.status != 0)
            #expect(run.output.contains("d4h migrate"), "the flag's database was checked: \(run.output)")
        }
    }

    @Test("`d4h serve --help` explains the settings and starts nothing")
    func serveHelp() async throws {
        let run = try await D4HCommand.run(["serve", "--help"], environment: ["DATABASE_URL": ""])
        #expect(run.status == 0)
        #expect(run.output.contains("--http-port 9000"), "\(run.output)")
        #expect(run.output.contains("Configuration"))
    }

    @Test(
        "`d4h serve` refuses a flag that is no setting, and a stray value, naming it",
        arguments: [
            (["--htp-port", "9000"], "--htp-port"), (["--http-port", "0", "--log-levle=debug"], "--log-levle"), (["9000"], "9000"),
        ])
    func serveRefusesUnknownFlag(arguments: [String], named: String) async throws {
        try await TestDatabase.withMigratedDatabase { url in
            let run = try await D4HCommand.run(["serve"] + arguments, environment: ["DATABASE_URL": url.text, "MAIL_TRANSPORT": "log"])
            #expect(run.status != 0)
            #expect(run.output.contains("\(named) is not a setting of d4h serve"), "\(run.output)")
        }
    }

    @Test("`d4h migrate` brings an empty database to the current schema, then reports it current")
    func migrateCommand() async throws {
        try await TestDatabase.withEmptyDatabase { url in
            let first = try await D4HCommand.run(["migrate"], environment: ["DATABASE_URL": url.text])
            #expect(first.status == 0, "\(first.output)")
            #expect(first.output.contains("Applied"))
            let second = try await D4HCommand.run(["migrate"], environment: ["DATABASE_URL": url.text])
            #expect(second.status == 0)
            #expect(second.output.contains("Schema is current"))
        }
    }

    @Test("`d4h auditors add` mails an activation link; the auditor must choose a password to activate, then logs in")
    func addAuditor() async throws {
        try await TestHarness.run { harness in
            let email = "auditor.\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let run = try await D4HCommand.run(
                ["auditors", "add", email],
                environment: [
                    "DATABASE_URL": harness.databaseURL.text, "MAIL_TRANSPORT": "file",
                    "MAIL_DIRECTORY": harness.mailDirectory.path, "PUBLIC_URL": "http://127.0.0.1:8080",
                ])
            #expect(run.status == 0, "\(run.output)")
            let token = try #require(try await harness.activationToken(for: email))
            #expect(try await harness.mails().last?.contains("/activate?token=\(token)") == true)

            let withoutPassword = try await harness.request(.post, "/v1/activations", json: #"{"token":"\#(token)"}"#)
            #expect(withoutPassword.status == .unprocessableContent)
            #expect(try harness.errorFields(withoutPassword) == ["password"])

            try await harness.activate(email: email, password: "auditor-password-1")
            let session = try await harness.logIn(email: email, password: "auditor-password-1")
            let me = try harness.object(try await harness.request(.get, "/v1/me", token: session))
            #expect(me["role"] as? String == "auditor")

            let added = try await harness.sql("SELECT count(*) FROM audit_events WHERE action = 'auditor.added' AND actor_role = 'operator'")
            #expect(try added.first?.decode(Int.self) == 1)
            let again = try await D4HCommand.run(["auditors", "add", email], environment: ["DATABASE_URL": harness.databaseURL.text])
            #expect(again.status != 0)
        }
    }

    @Test("`d4h auditors add` rejects an invalid email with a clear message and creates nothing")
    func addAuditorRejectsBadEmail() async throws {
        try await TestDatabase.withMigratedDatabase { url in
            let run = try await D4HCommand.run(["auditors", "add", "not-an-email"], environment: ["DATABASE_URL": url.text])
            #expect(run.status != 0)
            #expect(run.output.contains("email"))
        }
    }
}
