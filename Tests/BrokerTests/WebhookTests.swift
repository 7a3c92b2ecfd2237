import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

@Suite("Webhooks", .serialized)
struct WebhookTests {

    /// Queues an event as the request lifecycle will (`enqueue_webhook_event`); returns its id.
    @discardableResult
    func enqueue(
        _ harness: TestHarness, for party: String, type: String = "single_request.accepted", request: UUID = UUID(),
        data: String? = nil
    ) async throws -> String {
        let data = data ?? #"{"requestId":"\#(request.uuidString.lowercased())"}"#
        _ = try await harness.sql(
            "SELECT enqueue_webhook_event('\(party)'::uuid, '\(type)', '\(request.uuidString)'::uuid, '\(data)'::jsonb)")
        let row = try #require(
            try await harness.sql(
                "SELECT id::text FROM webhook_events WHERE third_party_id = '\(party)' ORDER BY seq DESC LIMIT 1"
            ).first)
        return try row.decode(String.self)
    }

    func status(_ harness: TestHarness, _ event: String) async throws -> String {
        try #require(try await harness.sql("SELECT status FROM webhook_events WHERE id = '\(event)'").first).decode(String.self)
    }

    func deliveries(_ harness: TestHarness, _ token: String, query: String = "") async throws -> [String: Any] {
        let response = try await harness.request(.get, "/v1/webhook/deliveries\(query)", token: token)
        try #require(response.status == .ok, "deliveries answered \(response.status): \(harness.text(response))")
        return try harness.object(response)
    }

    func items(_ page: [String: Any]) -> [[String: Any]] { page["items"] as? [[String: Any]] ?? [] }

    // MARK: Registration

    @Test("a company registers, reads, replaces and removes its webhook; the secret is never shown")
    func lifecycle() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeCompany()
            #expect(try await harness.request(.get, "/v1/webhook", token: token).status == .notFound)

            let put = try await harness.request(
                .put, "/v1/webhook", json: #"{"url":"https://93.184.215.14/hooks/d4h","secret":"\#(WebhookFixtures.secret)"}"#, token: token)
            #expect(put.status == .ok)
            let created = try harness.object(put)
            #expect(created["url"] as? String == "https://93.184.215.14/hooks/d4h")
            #expect(created["secret"] == nil)
            let createdAt = try #require(TestHarness.date(created["createdAt"]))

            let get = try await harness.request(.get, "/v1/webhook", token: token)
            #expect(get.status == .ok)
            #expect(try harness.object(get)["url"] as? String == "https://93.184.215.14/hooks/d4h")
            #expect(try harness.object(get)["secret"] == nil)

            let replaced = try await harness.request(
                .put, "/v1/webhook", json: #"{"url":"https://8.8.8.8/other","secret":"another-secret-0123"}"#, token: token)
            #expect(replaced.status == .ok)
            let webhook = try harness.object(replaced)
            #expect(webhook["url"] as? String == "https://8.8.8.8/other")
            #expect(TestHarness.date(webhook["createdAt"]) == createdAt)
            #expect(try #require(TestHarness.date(webhook["updatedAt"])) >= createdAt)
            #expect(try await harness.int("SELECT count(*) FROM webhooks WHERE secret = 'another-secret-0123'") == 1)

            #expect(try await harness.request(.delete, "/v1/webhook", token: token).status == .noContent)
            #expect(try await harness.request(.get, "/v1/webhook", token: token).status == .notFound)
            let again = try await harness.request(.delete, "/v1/webhook", token: token)
            #expect(again.status == .notFound)
            #expect(again.headers[.contentType] == "application/problem+json")
        }
    }

    @Test("registration refuses http, private and unresolvable hosts, user info and short secrets (422 naming the field)")
    func validation() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeCompany()
            let refusedURLs = [
                "http://93.184.215.14/hook", "https://127.0.0.1/hook", "https://10.1.2.3/hook", "https://[::1]/hook",
                "https://169.254.169.254/latest/meta-data", "https://localhost/hook", "https://100.64.0.1/hook",
                "https://user:pw@93.184.215.14/hook", "https://no-such-host.invalid/hook", "not a url",
                "https://93.184.215.14/" + String(repeating: "a", count: 2048),
            ]
            for url in refusedURLs {
                let response = try await harness.request(
                    .put, "/v1/webhook", json: #"{"url":"\#(url)","secret":"\#(WebhookFixtures.secret)"}"#, token: token)
                #expect(response.status == .unprocessableContent, "\(url)")
                #expect(try harness.errorFields(response) == ["url"], "\(url)")
            }
            for secret in ["", "fifteen-chars-x", String(repeating: "s", count: 257)] {
                let response = try await harness.request(
                    .put, "/v1/webhook", json: #"{"url":"https://93.184.215.14/hook","secret":"\#(secret)"}"#, token: token)
                #expect(response.status == .unprocessableContent)
                #expect(try harness.errorFields(response) == ["secret"])
            }
            let both = try await harness.request(.put, "/v1/webhook", json: #"{"url":"http://10.0.0.1/","secret":"short"}"#, token: token)
            #expect(Set(try harness.errorFields(both)) == ["url", "secret"])
            let message = try #require(
                (try harness.object(both)["errors"] as? [[String: Any]])?.first { $0["field"] as? String == "url" }?["message"] as? String)
            #expect(message.contains("https"))
            #expect(try await harness.request(.get, "/v1/webhook", token: token).status == .notFound)
            // The edges of the secret's length are allowed.
            for secret in [String(repeating: "s", count: 16), String(repeating: "s", count: 256)] {
                let response = try await harness.request(
                    .put, "/v1/webhook", json: #"{"url":"https://93.184.215.14/hook","secret":"\#(secret)"}"#, token: token)
                #expect(response.status == .ok)
            }
        }
    }

    @Test("WEBHOOK_ALLOW_PRIVATE allows an http receiver on a private address")
    func allowPrivate() async throws {
        try await TestHarness.run(configure: { $0.webhookAllowPrivate = true }) { harness in
            let token = try await harness.activeCompany()
            let response = try await harness.request(
                .put, "/v1/webhook", json: #"{"url":"http://127.0.0.1:9/hook","secret":"\#(WebhookFixtures.secret)"}"#, token: token)
            #expect(response.status == .ok)
            let ftp = try await harness.request(
                .put, "/v1/webhook", json: #"{"url":"ftp://127.0.0.1/","secret":"\#(WebhookFixtures.secret)"}"#, token: token)
            #expect(ftp.status == .unprocessableContent)
        }
    }

    @Test("only third parties have webhooks: people and auditors get 403, anonymous callers 401")
    func roles() async throws {
        try await TestHarness.run { harness in
            let user = try await harness.activeUser()
            let auditor = try await harness.activeAuditor()
            let body = #"{"url":"https://93.184.215.14/hook","secret":"\#(WebhookFixtures.secret)"}"#
            for token in [user, auditor] {
                #expect(try await harness.request(.put, "/v1/webhook", json: body, token: token).status == .forbidden)
                #expect(try await harness.request(.get, "/v1/webhook", token: token).status == .forbidden)
                #expect(try await harness.request(.delete, "/v1/webhook", token: token).status == .forbidden)
                #expect(try await harness.request(.get, "/v1/webhook/deliveries", token: token).status == .forbidden)
            }
            #expect(try await harness.request(.put, "/v1/webhook", json: body).status == .unauthorized)
            #expect(try await harness.request(.get, "/v1/webhook/deliveries").status == .unauthorized)
            #expect(try await harness.int("SELECT count(*) FROM webhooks") == 0)
        }
    }

    // MARK: Delivery

    @Test("a delivery carries the event, signed with the secret, and is listed as delivered")
    func signedDelivery() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestHarness.run(configure: WebhookFixtures.fast) { harness in
                let company = try await WebhookFixtures.company(harness, url: receiver.url("signed"))
                let request = UUID()
                let event = try await enqueue(
                    harness, for: company.id, type: "subscription.data_available", request: request,
                    data: #"{"requestId":"\#(request.uuidString.lowercased())","cursor":"c1"}"#)
                #expect(await eventually { await receiver.log.delivered("signed").count == 1 })
                let received = try #require(await receiver.log.delivered("signed").first)
                let signature = try #require(received.signature)
                #expect(WebhookSignature.verify(header: signature, body: received.body, secret: WebhookFixtures.secret))
                #expect(!WebhookSignature.verify(header: signature, body: received.body, secret: "another-secret-0123"))
                #expect(received.contentType == "application/json")
                #expect(received.eventID == event)

                let json = try #require(try JSONSerialization.jsonObject(with: received.body) as? [String: Any])
                #expect(Set(json.keys) == ["id", "type", "createdAt", "data"])
                #expect(json["id"] as? String == event)
                #expect(json["type"] as? String == "subscription.data_available")
                #expect((json["createdAt"] as? String)?.hasSuffix("Z") == true)
                #expect(TestHarness.date(json["createdAt"]).map { abs($0.timeIntervalSinceNow) < 60 } == true)
                let data = try #require(json["data"] as? [String: Any])
                #expect(data["requestId"] as? String == request.uuidString.lowercased())
                #expect(data["cursor"] as? String == "c1")

                #expect(await eventually { try await status(harness, event) == "delivered" })
                let item = try #require(items(try await deliveries(harness, company.token)).first)
                #expect(item["id"] as? String == event)
                #expect(item["status"] as? String == "delivered")
                #expect(item["type"] as? String == "subscription.data_available")
                #expect(item["requestId"] as? String == request.uuidString.lowercased())
                #expect(TestHarness.date(item["deliveredAt"]) != nil)
                #expect(item["nextAttemptAt"] == nil)
                let attempts = try #require(item["attempts"] as? [[String: Any]])
                #expect(attempts.count == 1)
                #expect(attempts.first?["attempt"] as? Int == 1)
                #expect(attempts.first?["statusCode"] as? Int == 200)
                #expect(attempts.first?["durationMs"] is Int)
            }
        }
    }

    @Test("a receiver that fails twice gets the event on the third attempt; all three are listed")
    func retries() async throws {
        try await WebhookReceiver.run { receiver in
            await receiver.log.fail("flaky", times: 2)
            try await TestHarness.run(configure: WebhookFixtures.fast) { harness in
                let company = try await WebhookFixtures.company(harness, url: receiver.url("flaky"))
                let event = try await enqueue(harness, for: company.id)
                #expect(await eventually { try await status(harness, event) == "delivered" })
                #expect(await receiver.log.all("flaky").map(\.status) == [500, 500, 200])
                #expect(Set(await receiver.log.all("flaky").map(\.eventID)) == [event])

                let item = try #require(items(try await deliveries(harness, company.token)).first)
                #expect(item["status"] as? String == "delivered")
                let attempts = try #require(item["attempts"] as? [[String: Any]])
                #expect(attempts.map { $0["attempt"] as? Int } == [1, 2, 3])
                #expect(attempts.map { $0["statusCode"] as? Int } == [500, 500, 200])
                #expect((attempts.first?["error"] as? String)?.contains("500") == true)
                #expect(attempts.last?["error"] == nil)
                // Backoff: the attempts are spread out, not fired back to back.
                let times = attempts.compactMap { TestHarness.date($0["at"]) }
                #expect(times.count == 3 && times[2].timeIntervalSince(times[0]) >= 0.3)
            }
        }
    }

    @Test("events of one request are delivered in order even when the first one fails at first")
    func orderPerRequest() async throws {
        try await WebhookReceiver.run { receiver in
            await receiver.log.fail("ordered", times: 3)
            try await TestHarness.run(configure: WebhookFixtures.fast) { harness in
                let company = try await WebhookFixtures.company(harness, url: receiver.url("ordered"))
                let request = UUID()
                let first = try await enqueue(harness, for: company.id, type: "single_request.accepted", request: request)
                let second = try await enqueue(
                    harness, for: company.id, type: "subscription.ended", request: request,
                    data: #"{"requestId":"\#(request.uuidString.lowercased())","endedBy":"user","reason":"revoked"}"#)
                #expect(await eventually { try await status(harness, second) == "delivered" })
                let sequence = await receiver.log.all("ordered").map { "\($0.eventID == first ? "first" : "second") \($0.status)" }
                #expect(sequence == ["first 500", "first 500", "first 500", "first 200", "second 200"])
            }
        }
    }

    @Test("a hanging receiver of one company does not delay another company's deliveries")
    func isolation() async throws {
        try await WebhookReceiver.run { receiver in
            await receiver.log.hang("stuck")
            try await TestHarness.run(configure: {
                WebhookFixtures.fast(&$0)
                $0.webhookDelivery.requestTimeout = .seconds(6)
                $0.webhookDelivery.lease = .seconds(20)
                $0.webhookDelivery.maxInFlight = 4
                $0.webhookDelivery.maxInFlightPerThirdParty = 2
            }) { harness in
                let stuck = try await WebhookFixtures.company(harness, url: receiver.url("stuck"))
                let healthy = try await WebhookFixtures.company(harness, url: receiver.url("healthy"))
                for _ in 0..<8 { try await enqueue(harness, for: stuck.id) }
                #expect(await eventually { await receiver.log.arrived("stuck") == 2 })
                let start = ContinuousClock.now
                for _ in 0..<3 { try await enqueue(harness, for: healthy.id) }
                #expect(await eventually(timeout: .seconds(3)) { await receiver.log.delivered("healthy").count == 3 })
                #expect(ContinuousClock.now - start < .seconds(3))
                // The stuck company holds only its share of the slots.
                #expect(await receiver.log.arrived("stuck") == 2)
                await receiver.log.release("stuck")
            }
        }
    }

    @Test("an event survives a server restart: in flight at shutdown, or leased by an instance that crashed")
    func restart() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestDatabase.withMigratedDatabase { url in
                await receiver.log.hang("restart")
                let configure: @Sendable (inout BrokerConfiguration) -> Void = {
                    WebhookFixtures.fast(&$0)
                    $0.webhookDelivery.requestTimeout = .seconds(1)
                }
                let owner = TestHarness.Company()
                try await TestHarness.run(databaseURL: url, configure: configure) { harness in
                    let token = try await harness.activeCompany(owner)
                    let response = try await harness.request(
                        .put, "/v1/webhook", json: #"{"url":"\#(receiver.url("restart"))","secret":"\#(WebhookFixtures.secret)"}"#, token: token)
                    try #require(response.status == .ok)
                    try await enqueue(harness, for: try await harness.accountID(token))
                    #expect(await eventually { await receiver.log.arrived("restart") == 1 })
                }
                // The first server stopped while its post hung: the attempt is recorded, the event still pending.
                await receiver.log.release("restart")
                let rows = try await TestDatabase.withClient(url) { client in
                    try await client.query(
                        """
                        SELECT e.id::text, e.status, a.error FROM webhook_events e JOIN webhook_attempts a ON a.event_id = e.id
                        """, logger: TestDatabase.logger
                    ).collect().map { try $0.decode((String, String, String?).self) }
                }
                try #require(rows.count == 1)
                let inFlight = rows[0].0
                #expect(rows[0].1 == "pending")
                #expect(rows[0].2 == "timed out")
                // A second event, claimed (attempt 1) by an instance that then vanished: its lease ends in 2 s.
                let crashed = try await TestDatabase.withClient(url) { client in
                    try await client.query(
                        """
                        INSERT INTO webhook_events (third_party_id, type, request_id, data, attempts, next_attempt_at)
                        SELECT third_party_id, 'single_request.refused', gen_random_uuid(), '{}', 1, now() + interval '2 seconds'
                        FROM webhooks RETURNING id::text
                        """, logger: TestDatabase.logger
                    ).collect().first!.decode(String.self)
                }

                try await TestHarness.run(databaseURL: url, configure: configure) { harness in
                    #expect(await eventually { try await status(harness, inFlight) == "delivered" })
                    #expect(try await status(harness, crashed) == "pending")
                    #expect(await eventually { try await status(harness, crashed) == "delivered" })
                    let delivered = await receiver.log.all("restart").filter { $0.status == 200 }.compactMap(\.eventID)
                    #expect(Set(delivered) == [inFlight, crashed])
                    let token = try await harness.logIn(email: owner.email, password: owner.password)
                    let listed = items(try await deliveries(harness, token))
                    let attempts = Dictionary(
                        uniqueKeysWithValues: listed.map {
                            ($0["id"] as? String ?? "", ($0["attempts"] as? [[String: Any]] ?? []).compactMap { $0["attempt"] as? Int })
                        })
                    #expect(attempts[inFlight] == [1, 2])
                    #expect(attempts[crashed] == [2])
                }
            }
        }
    }

    @Test("a URL that no longer passes the policy at delivery time is not posted to; the attempt says why")
    func policyAtDelivery() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestDatabase.withMigratedDatabase { url in
                let owner = TestHarness.Company()
                // Registered on a server that allowed private addresses …
                try await TestHarness.run(databaseURL: url, configure: WebhookFixtures.fast) { harness in
                    let token = try await harness.activeCompany(owner)
                    let response = try await harness.request(
                        .put, "/v1/webhook", json: #"{"url":"\#(receiver.url("private"))","secret":"\#(WebhookFixtures.secret)"}"#, token: token)
                    try #require(response.status == .ok)
                }
                // … delivered by one that does not.
                try await TestHarness.run(
                    databaseURL: url,
                    configure: {
                        WebhookFixtures.fast(&$0)
                        $0.webhookAllowPrivate = false
                    }
                ) { harness in
                    let party = try #require(try await harness.sql("SELECT third_party_id::text FROM webhooks").first).decode(String.self)
                    let event = try await enqueue(harness, for: party)
                    #expect(await eventually { try await harness.int("SELECT count(*) FROM webhook_attempts") >= 2 })
                    let errors = try await harness.sql("SELECT error FROM webhook_attempts WHERE event_id = '\(event)'")
                        .map { try $0.decode(String?.self) ?? "" }
                    #expect(errors.allSatisfy { $0.contains("not sent") && $0.contains("https") })
                    #expect(try await status(harness, event) == "pending")
                    #expect(await receiver.log.arrived("private") == 0)
                }
            }
        }
    }

    @Test("two delivery loops on one database deliver each event exactly once, in order per request")
    func twoInstances() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestHarness.run(configure: WebhookFixtures.fast) { first in
                try await TestHarness.run(databaseURL: first.databaseURL, configure: WebhookFixtures.fast) { second in
                    let company = try await WebhookFixtures.company(first, url: receiver.url("shared"))
                    let requests = (0..<40).map { _ in UUID() }
                    // 40 requests × 3 events, interleaved, written in one statement while both loops poll.
                    _ = try await first.sql(
                        """
                        SELECT enqueue_webhook_event('\(company.id)'::uuid, 'single_request.accepted', r::uuid, jsonb_build_object('n', n))
                        FROM unnest(ARRAY['\(requests.map(\.uuidString).joined(separator: "','"))']) r, generate_series(1, 3) n
                        ORDER BY n, r
                        """)
                    #expect(try await second.int("SELECT count(*) FROM webhook_events") == 120)
                    #expect(
                        await eventually(timeout: .seconds(30)) {
                            try await second.int("SELECT count(*) FROM webhook_events WHERE status = 'delivered'") == 120
                        })
                    try await Task.sleep(for: .milliseconds(300))
                    let received = await receiver.log.all("shared")
                    #expect(received.count == 120)
                    #expect(Set(received.compactMap(\.eventID)).count == 120)
                    // Per request, the receiver saw n = 1, 2, 3 in that order.
                    let requestOf = Dictionary(
                        uniqueKeysWithValues: try await first.sql(
                            "SELECT id::text, request_id::text FROM webhook_events"
                        ).map { try $0.decode((String, String).self) })
                    var seen: [String: [Int]] = [:]
                    for event in received {
                        let body = try #require(try JSONSerialization.jsonObject(with: event.body) as? [String: Any])
                        let request = try #require(requestOf[event.eventID ?? ""])
                        seen[request, default: []].append((body["data"] as? [String: Any])?["n"] as? Int ?? 0)
                    }
                    #expect(seen.count == 40)
                    #expect(seen.values.allSatisfy { $0 == [1, 2, 3] })
                }
            }
        }
    }

    @Test("an event that cannot be delivered within the retry horizon is marked failed and no longer sent")
    func givesUp() async throws {
        try await WebhookReceiver.run { receiver in
            await receiver.log.fail("down", times: 1000)
            try await TestHarness.run(configure: {
                WebhookFixtures.fast(&$0)
                $0.webhookDelivery.backoffBase = .milliseconds(100)
                $0.webhookDelivery.retryHorizon = .seconds(1)
            }) { harness in
                let company = try await WebhookFixtures.company(harness, url: receiver.url("down"))
                let event = try await enqueue(harness, for: company.id)
                #expect(await eventually { try await status(harness, event) == "failed" })
                let attempts = await receiver.log.all("down").count
                #expect(attempts >= 2)
                try await Task.sleep(for: .milliseconds(600))
                #expect(await receiver.log.all("down").count == attempts)
                let item = try #require(items(try await deliveries(harness, company.token)).first)
                #expect(item["status"] as? String == "failed")
                #expect(item["nextAttemptAt"] == nil)
                #expect((item["attempts"] as? [Any])?.count == attempts)
            }
        }
    }

    @Test("removing the webhook marks its pending events failed; later events are not queued")
    func removalFailsPending() async throws {
        try await WebhookReceiver.run { receiver in
            await receiver.log.fail("removed", times: 1000)
            try await TestHarness.run(configure: {
                WebhookFixtures.fast(&$0)
                $0.webhookDelivery.backoffBase = .seconds(60)
            }) { harness in
                let company = try await WebhookFixtures.company(harness, url: receiver.url("removed"))
                let event = try await enqueue(harness, for: company.id)
                #expect(await eventually { await receiver.log.all("removed").count == 1 })
                #expect(await eventually { try await harness.int("SELECT count(*) FROM webhook_attempts") == 1 })
                #expect(try await status(harness, event) == "pending")
                #expect(try await harness.request(.delete, "/v1/webhook", token: company.token).status == .noContent)
                #expect(try await status(harness, event) == "failed")
                let item = try #require(items(try await deliveries(harness, company.token)).first)
                #expect(item["status"] as? String == "failed")
                _ = try await harness.sql("SELECT enqueue_webhook_event('\(company.id)'::uuid, 'single_request.refused', NULL, '{}'::jsonb)")
                #expect(try await harness.int("SELECT count(*) FROM webhook_events") == 1)
            }
        }
    }

    @Test("a delivery whose stored type the contract does not name is a logged 500, not shown as another event")
    func unknownStoredType() async throws {
        try await TestHarness.run(expectedLogs: [.error("webhook_events.type")]) { harness in
            let token = try await harness.activeCompany()
            let company = try await harness.accountID(token)
            // Due tomorrow, so the delivery loop leaves it alone; no type check in the table stops it.
            _ = try await harness.sql(
                "INSERT INTO webhook_events (third_party_id, type, data, next_attempt_at) "
                    + "VALUES ('\(company)'::uuid, 'run.renamed', '{}'::jsonb, now() + interval '1 day')")
            let response = try await harness.request(.get, "/v1/webhook/deliveries", token: token)
            #expect(response.status == .internalServerError, "\(harness.text(response))")
            #expect(!harness.text(response).contains("single_request.accepted"))
        }
    }

    @Test("a stored value the contract does not name is answered 500 and logged at error level, naming the column")
    func storedValueMismatchIsLogged() {
        let log = ServerLog()
        let problem = ProblemMiddleware.problem(
            for: StoredValueMismatch(column: "webhook_events.type", value: "run.renamed"), logger: log.logger(level: .warning))
        #expect(problem.status == .internalServerError)
        let lines = log.unexpected(allowing: [])
        #expect(lines.count == 1)
        #expect(lines.first?.level == .error)
        #expect(lines.first?.metadata.contains("webhook_events.type") == true)
    }

    @Test("the delivery list pages newest first with a cursor")
    func pagination() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestHarness.run(configure: WebhookFixtures.fast) { harness in
                let company = try await WebhookFixtures.company(harness, url: receiver.url("paged"))
                var events: [String] = []
                for _ in 0..<3 { events.append(try await enqueue(harness, for: company.id)) }
                let first = try await deliveries(harness, company.token, query: "?limit=2")
                #expect(items(first).compactMap { $0["id"] as? String } == [events[2], events[1]])
                let cursor = try #require(first["nextCursor"] as? String)
                let second = try await deliveries(harness, company.token, query: "?limit=2&cursor=\(cursor)")
                #expect(items(second).compactMap { $0["id"] as? String } == [events[0]])
                #expect(second["nextCursor"] == nil || second["nextCursor"] is NSNull)
                let bad = try await harness.request(.get, "/v1/webhook/deliveries?cursor=nonsense", token: company.token)
                #expect(bad.status == .unprocessableContent)
                // Another company sees none of these.
                let other = try await harness.activeCompany(TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber()))
                #expect(items(try await deliveries(harness, other)).isEmpty)
            }
        }
    }
}
