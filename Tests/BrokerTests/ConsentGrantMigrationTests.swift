import BrokerTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BrokerDomain

/// Migration 0023 on a database written before grants existed: every accepted request becomes a grant of
/// everything it asked, nothing else changes, and what it releases stays the same.
@Suite("Consent grant migration")
struct ConsentGrantMigrationTests {
    @Test("requests accepted before 0023 become grants of all they asked; pending ones stay ungranted; releases are unchanged")
    func acceptedRequestsBecomeWholeGrants() async throws {
        let all = try Migration.bundled()
        let before = all.filter { $0.version <= 22 }
        try await TestDatabase.withEmptyDatabase { url in
            try await TestDatabase.withClient(url) { client in
                let logger = TestDatabase.logger
                _ = try await Migrator(client: client, migrations: before, logger: logger).migrate()
                // A company, a person with samples, and requests in every state, as 0022's schema stored them.
                try await client.query(
                    """
                    INSERT INTO accounts (id, role, email, status) VALUES
                        ('00000000-0000-0000-0000-00000000000c', 'third_party', 'lab@example.com', 'active'),
                        ('00000000-0000-0000-0000-00000000000a', 'user', 'ada@example.com', 'active')
                    """, logger: logger)
                try await client.query(
                    """
                    INSERT INTO third_parties (account_id, vat_number, company_name)
                    VALUES ('00000000-0000-0000-0000-00000000000c', '01234567897', 'Lab S.r.l.')
                    """, logger: logger)
                try await client.query(
                    """
                    INSERT INTO users (account_id, fiscal_code, full_name, birth_date, sex)
                    VALUES ('00000000-0000-0000-0000-00000000000a', 'RSSMRA80A01H501U', 'Ada Rossi', '1980-01-01', 'F')
                    """, logger: logger)
                try await client.query(
                    """
                    INSERT INTO samples (user_id, type, at, value, arrival) VALUES
                        ('00000000-0000-0000-0000-00000000000a', 1, '2026-03-01T08:00:00Z', 61, 1),
                        ('00000000-0000-0000-0000-00000000000a', 2, '2026-03-01T09:00:00Z', 1000, 2)
                    """, logger: logger)
                try await client.query(
                    """
                    INSERT INTO single_requests (id, third_party_id, user_id, subject_email, types, purpose, window_from, window_to,
                                                 status, decided_at, accepted_arrival, subscription_days, ends_at, expires_at)
                    VALUES
                        ('00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-00000000000c',
                         '00000000-0000-0000-0000-00000000000a', 'ada@example.com', '{1,2}', 'Study', '2026-01-01', NULL,
                         'accepted', now(), 2, NULL, NULL, now() + interval '30 days'),
                        ('00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-00000000000c',
                         '00000000-0000-0000-0000-00000000000a', 'ada@example.com', '{1}', 'Follow-up', NULL, NULL,
                         'accepted', now(), 2, 90, now() + interval '90 days', now() + interval '30 days'),
                        ('00000000-0000-0000-0000-000000000003', '00000000-0000-0000-0000-00000000000c',
                         '00000000-0000-0000-0000-00000000000a', 'x@example.com', '{2}', 'Ask', NULL, NULL,
                         'pending', NULL, NULL, 30, NULL, now() + interval '30 days'),
                        ('00000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-00000000000c',
                         '00000000-0000-0000-0000-00000000000a', 'y@example.com', '{3}', 'Refused', NULL, NULL,
                         'refused', now(), NULL, NULL, NULL, now() + interval '30 days')
                    """, logger: logger)
                let releasedBefore = try await released(client)

                let applied = try await Migrator(client: client, migrations: all, logger: logger).migrate()
                #expect(applied.first == 23)
                try await client.withConnection { connection in
                    var requests: [SingleRequest] = []
                    for try await row in try await connection.query(
                        "\(unescaped: SingleRequestStore.selection) FROM single_requests r LEFT JOIN third_parties t ON t.account_id = r.third_party_id ORDER BY r.id",
                        logger: logger)
                    {
                        requests.append(try SingleRequestStore.request(from: row))
                    }
                    #expect(requests.count == 4)
                    for request in requests {
                        #expect(
                            request.asked
                                == ConsentTerms(
                                    types: request.types, windowFrom: request.windowFrom, windowTo: request.windowTo,
                                    subscriptionDays: request.asked.subscriptionDays))
                    }
                    #expect(requests.map { $0.grant != nil } == [true, true, false, false])
                    #expect(requests.compactMap(\.grant).allSatisfy { !$0.narrowed })
                    #expect(requests[0].grant?.terms.types == [.sample(.heartRate), .sample(.systolicPressure)])
                    #expect(requests[1].grant?.terms.subscriptionDays == 90)
                    #expect(requests[1].subscription?.status == .active)
                    #expect(requests[2].subscription?.days == 30)
                }
                #expect(try await released(client) == releasedBefore)
            }
        }
    }

    /// What each request releases now, by the release bound and the request's own terms.
    private func released(_ client: DatabasePool) async throws -> [String] {
        try await client.query(
            """
            SELECT r.id::text || ':' || count(s.*) FROM single_requests r
            LEFT JOIN samples s ON s.user_id = r.user_id AND r.status = 'accepted' AND s.type = ANY(r.types)
                 AND (r.window_from IS NULL OR s.at >= r.window_from) AND (r.window_to IS NULL OR s.at <= r.window_to)
            GROUP BY r.id ORDER BY r.id
            """, logger: TestDatabase.logger
        ).collect().map { try $0.decode(String.self) }
    }
}
