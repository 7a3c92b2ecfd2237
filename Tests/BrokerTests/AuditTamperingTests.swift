import Foundation
import PostgresNIO
import Testing

/// Someone who holds the database (its owner, or the application's own role) tries to truncate or rewrite
/// the audit log without an auditor noticing. These tests drive only SQL, HTTP and the `d4h` executable.
@Suite("Audit log tampering")
struct AuditTamperingTests {
    /// A person, a company and an auditor: four events (created and activated, twice).
    /// `d4h audit verify` on the test's database, against a signed checkpoint and its public key if given.
    private func verify(_ harness: TestHarness, against checkpoint: URL? = nil, key: String? = nil) async throws -> ChildProcess.Run {
        var arguments = ["audit", "verify"]
        if let checkpoint, let key { arguments += ["--checkpoint", checkpoint.path, "--public-key", key] }
        return try await D4HCommand.run(arguments, environment: ["DATABASE_URL": harness.databaseURL.text])
    }

    private func fourEvents(_ harness: TestHarness) async throws -> String {
        try await harness.activeUser()
        try await harness.activeCompany()
        return try await harness.activeAuditor()
    }

    private func refused(_ harness: TestHarness, _ statement: String) async -> Bool {
        do {
            _ = try await harness.sql(statement)
            return false
        } catch {
            return true
        }
    }

    /// `d4h audit checkpoint` signed with `key`, written to a temporary file.
    static func checkpoint(_ harness: TestHarness, key: URL) async throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-checkpoint-\(UUID().uuidString).json")
        let run = try await D4HCommand.run(
            ["audit", "checkpoint", "--output", file.path],
            environment: ["DATABASE_URL": harness.databaseURL.text, "AUDIT_SIGNING_KEY_FILE": key.path])
        try #require(run.status == 0, "\(run.output)")
        return file
    }

    @Test("the application's connection can neither UPDATE, DELETE nor TRUNCATE the audit log, nor move its head back")
    func appendOnly() async throws {
        try await TestHarness.run { harness in
            _ = try await fourEvents(harness)
            #expect(await refused(harness, "UPDATE audit_events SET action = 'account.erased' WHERE seq = 2"))
            #expect(await refused(harness, "DELETE FROM audit_events WHERE seq = 4"))
            #expect(await refused(harness, "TRUNCATE audit_events"))
            #expect(await refused(harness, "UPDATE audit_chain_head SET seq = 3, hash = (SELECT hash FROM audit_events WHERE seq = 3)"))
            #expect(await refused(harness, "DELETE FROM audit_chain_head"))
            #expect(try await harness.int("SELECT count(*) FROM audit_events") == 4)
            #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action = 'account.erased'") == 0)
            // Appending still works, and the log still verifies.
            try await harness.activeUser(TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode()))
            #expect(try await harness.int("SELECT count(*) FROM audit_events") == 6)
            let cli = try await verify(harness)
            #expect(cli.status == 0, "\(cli.output)")
        }
    }

    @Test("verification is recomputed outside the database: a rewritten row is found even when the SQL hash function lies")
    func lyingSQLFunction() async throws {
        try await TestHarness.run { harness in
            let auditor = try await fourEvents(harness)
            // The owner keeps the canonical bytes of the true rows, rewrites row 2, and replaces the SQL
            // function every in-database check relies on with one that answers from the kept bytes.
            _ = try await harness.sql("ALTER TABLE audit_events DISABLE TRIGGER USER")
            _ = try await harness.sql(
                """
                CREATE TABLE kept AS SELECT seq, audit_event_canonical(seq, at, actor_id, actor_role, action, request_id, subject, details) AS canonical
                FROM audit_events
                """)
            _ = try await harness.sql("UPDATE audit_events SET action = 'account.erased' WHERE seq = 2")
            _ = try await harness.sql(
                """
                CREATE OR REPLACE FUNCTION audit_event_canonical(
                    p_seq bigint, p_at timestamptz, p_actor_id text, p_actor_role text, p_action text,
                    p_request_id uuid, p_subject text, p_details jsonb
                ) RETURNS bytea LANGUAGE sql STABLE AS $$
                    SELECT coalesce((SELECT canonical FROM kept WHERE seq = p_seq), convert_to(concat_ws(E'\\x1f',
                        p_seq::text, to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                        coalesce(p_actor_id, ''), p_actor_role, p_action, coalesce(p_request_id::text, ''),
                        coalesce(p_subject, ''), p_details::text), 'UTF8'))
                $$
                """)
            // The lie holds inside the database.
            #expect(try await harness.bool(ConsistencyChecks.chainIsValid))

            let api = try harness.object(try await harness.request(.get, "/v1/audit/verification", token: auditor))
            #expect(api["valid"] as? Bool == false)
            #expect(api["brokenAt"] as? Int == 2)
            let cli = try await verify(harness)
            #expect(cli.status != 0)
            #expect(cli.output.contains("sequence number 2"), "\(cli.output)")
        }
    }

    @Test("truncation: deleting the last events and moving the head back is caught against an earlier signed checkpoint")
    func truncationIsDetected() async throws {
        let key = try await AuditFixtures.signingKey()
        defer { try? FileManager.default.removeItem(at: key.file) }
        try await TestHarness.run { harness in
            _ = try await fourEvents(harness)
            let checkpoint = try await Self.checkpoint(harness, key: key.file)
            defer { try? FileManager.default.removeItem(at: checkpoint) }
            let good = try await verify(harness, against: checkpoint, key: key.publicKey)
            #expect(good.status == 0, "\(good.output)")
            #expect(good.output.contains("4 events"), "\(good.output)")

            // The owner disables the trigger, deletes events 3 and 4 and moves the head back to event 2.
            _ = try await harness.sql("ALTER TABLE audit_events DISABLE TRIGGER USER")
            _ = try await harness.sql("ALTER TABLE audit_chain_head DISABLE TRIGGER USER")
            _ = try await harness.sql("DELETE FROM audit_events WHERE seq > 2")
            _ = try await harness.sql("UPDATE audit_chain_head SET seq = 2, hash = (SELECT hash FROM audit_events WHERE seq = 2)")
            // What remains is a perfectly valid chain: without a checkpoint nothing can tell.
            let plain = try await verify(harness)
            #expect(plain.status == 0, "\(plain.output)")

            let caught = try await verify(harness, against: checkpoint, key: key.publicKey)
            #expect(caught.status != 0)
            #expect(caught.output.contains("truncated"), "\(caught.output)")
            #expect(caught.output.contains("4 events"), "\(caught.output)")
        }
    }

    @Test("rewriting: an early event changed and the whole chain and head recomputed in SQL is caught against a checkpoint")
    func rewritingIsDetected() async throws {
        let key = try await AuditFixtures.signingKey()
        defer { try? FileManager.default.removeItem(at: key.file) }
        try await TestHarness.run { harness in
            _ = try await fourEvents(harness)
            let checkpoint = try await Self.checkpoint(harness, key: key.file)
            defer { try? FileManager.default.removeItem(at: checkpoint) }
            try await harness.activeUser(TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode()))

            _ = try await harness.sql("ALTER TABLE audit_events DISABLE TRIGGER USER")
            _ = try await harness.sql("ALTER TABLE audit_chain_head DISABLE TRIGGER USER")
            _ = try await harness.sql("UPDATE audit_events SET action = 'account.erased' WHERE seq = 2")
            _ = try await harness.sql(
                """
                DO $$
                DECLARE r record; v_prev bytea := '\\x0000000000000000000000000000000000000000000000000000000000000000';
                BEGIN
                    FOR r IN SELECT * FROM audit_events ORDER BY seq LOOP
                        UPDATE audit_events SET prev_hash = v_prev,
                            hash = sha256(v_prev || audit_event_canonical(r.seq, r.at, r.actor_id, r.actor_role, r.action, r.request_id, r.subject, r.details))
                        WHERE seq = r.seq RETURNING hash INTO v_prev;
                    END LOOP;
                    UPDATE audit_chain_head SET hash = v_prev;
                END $$
                """)
            let plain = try await verify(harness)
            #expect(plain.status == 0, "\(plain.output)")

            let caught = try await verify(harness, against: checkpoint, key: key.publicKey)
            #expect(caught.status != 0)
            #expect(caught.output.contains("rewritten"), "\(caught.output)")
        }
    }

    @Test("a checkpoint signed by another key, or edited after signing, is refused")
    func foreignCheckpointIsRefused() async throws {
        let key = try await AuditFixtures.signingKey()
        let other = try await AuditFixtures.signingKey()
        defer { for file in [key.file, other.file] { try? FileManager.default.removeItem(at: file) } }
        try await TestHarness.run { harness in
            _ = try await fourEvents(harness)
            let forged = try await Self.checkpoint(harness, key: other.file)
            defer { try? FileManager.default.removeItem(at: forged) }
            let refusedRun = try await D4HCommand.run(
                ["audit", "verify", "--checkpoint", forged.path, "--public-key", key.publicKey],
                environment: ["DATABASE_URL": harness.databaseURL.text])
            #expect(refusedRun.status != 0)
            #expect(refusedRun.output.contains("signature"), "\(refusedRun.output)")

            // The right key, but the size lowered after signing (to hide a truncation).
            let signed = try await Self.checkpoint(harness, key: key.file)
            defer { try? FileManager.default.removeItem(at: signed) }
            var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: signed)) as? [String: Any])
            json["logSize"] = 2
            try JSONSerialization.data(withJSONObject: json).write(to: signed)
            let edited = try await D4HCommand.run(
                ["audit", "verify", "--checkpoint", signed.path, "--public-key", key.publicKey],
                environment: ["DATABASE_URL": harness.databaseURL.text])
            #expect(edited.status != 0)
            #expect(edited.output.contains("signature"), "\(edited.output)")
        }
    }
}
