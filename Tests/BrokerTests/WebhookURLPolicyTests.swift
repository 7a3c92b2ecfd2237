import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

@Suite("Webhook URL policy")
struct WebhookURLPolicyTests {
    @Test(
        "public addresses are accepted",
        arguments: [
            "8.8.8.8", "93.184.215.14", "1.1.1.1", "100.63.255.255", "100.128.0.1", "172.15.255.255", "172.32.0.1",
            "192.169.0.1", "198.17.255.255", "223.255.255.255", "2606:4700:4700::1111", "2a00:1450:4001:81b::200e",
            "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
        ])
    func publicAddress(_ text: String) throws {
        let address = try #require(WebhookURLPolicy.parseAddress(text))
        #expect(WebhookURLPolicy.isPublic(address))
    }

    @Test(
        "loopback, private, link-local, shared, multicast, broadcast, documentation and reserved addresses are refused",
        arguments: [
            "0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.255", "127.0.0.1", "127.8.8.8",
            "169.254.169.254", "172.16.0.1", "172.31.255.255", "192.0.0.8", "192.0.2.1", "192.88.99.1", "192.168.1.1",
            "198.18.0.1", "198.19.255.255", "198.51.100.7", "203.0.113.9", "224.0.0.1", "239.255.255.250", "240.0.0.1",
            "255.255.255.255",
            "::", "::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::127.0.0.1", "64:ff9b::a00:1",
            "64:ff9b:1::1", "2002:a00:1::1", "2001:db8::1", "2001::1", "3fff::1", "fc00::1", "fd12:3456::1", "fe80::1",
            "febf::1", "fec0::1", "ff02::1", "100::1", "5f00::1",
        ])
    func nonPublicAddress(_ text: String) throws {
        let address = try #require(WebhookURLPolicy.parseAddress(text))
        #expect(!WebhookURLPolicy.isPublic(address))
    }

    @Test("only https, with a host and without a user name or password, at most 2048 characters")
    func syntax() {
        let strict = WebhookURLPolicy(allowPrivate: false)
        func rejection(_ text: String, _ policy: WebhookURLPolicy = strict) -> WebhookURLPolicy.Rejection? {
            if case .failure(let rejection) = policy.checkSyntax(text) { return rejection }
            return nil
        }
        #expect(rejection("https://hooks.example.com/d4h?x=1") == nil)
        #expect(rejection("HTTPS://hooks.example.com:8443/d4h") == nil)
        #expect(rejection("http://hooks.example.com/d4h") == .schemeNotHTTPS)
        #expect(rejection("ftp://hooks.example.com/") == .schemeNotHTTPS)
        #expect(rejection("hooks.example.com/d4h") == .schemeNotHTTPS)
        #expect(rejection("https://user:password@hooks.example.com/") == .hasUserInfo)
        #expect(rejection("https://user@hooks.example.com/") == .hasUserInfo)
        #expect(rejection("https:///path-only") == .malformed)
        #expect(rejection("https://hooks example.com/") == .malformed)
        #expect(rejection("https://hooks.example.com/" + String(repeating: "a", count: 2048)) == .tooLong)
        let lenient = WebhookURLPolicy(allowPrivate: true)
        #expect(rejection("http://127.0.0.1:9000/hook", lenient) == nil)
        #expect(rejection("ftp://127.0.0.1/", lenient) == .schemeNotHTTP)
    }

    @Test("resolution: every address of the host must be public unless private addresses are allowed")
    func resolution() async throws {
        let strict = WebhookURLPolicy(allowPrivate: false)
        let lenient = WebhookURLPolicy(allowPrivate: true)
        #expect(try (await strict.check("https://8.8.8.8/hook")).get().absoluteString == "https://8.8.8.8/hook")
        #expect(await strict.check("https://127.0.0.1/hook") == .failure(.notPublic))
        #expect(await strict.check("https://[::ffff:10.0.0.1]/hook") == .failure(.notPublic))
        #expect(await strict.check("https://localhost/hook") == .failure(.notPublic))
        #expect(await strict.check("https://no-such-host.invalid/hook") == .failure(.doesNotResolve))
        #expect((try? (await lenient.check("http://localhost:9000/hook")).get()) != nil)
        #expect((try? (await lenient.check("https://[::1]:9000/hook")).get()) != nil)
    }
}

/// Issue 17, item 9: registration answered "has a host name that does not resolve" for one URL and "must
/// resolve to public internet addresses only" for another, so a company could map the server's internal DNS
/// (which names exist inside, and that they are internal). Every refused URL now gets one answer.
@Suite("Webhook URL policy: no DNS oracle")
struct WebhookDNSOracleTests {
    @Test("a name that does not resolve, internal names and addresses, and a malformed URL all get the identical 422")
    func oneAnswerForEveryRefusal() async throws {
        try await TestHarness.run(configure: { $0.webhookAllowPrivate = false }) { harness in
            let company = try await harness.activeCompany()
            let refused = [
                "https://no-such-host.invalid/hook",  // does not resolve
                "https://localhost/hook",  // resolves, to loopback
                "https://10.0.0.1/hook", "https://[::1]/hook", "https://169.254.169.254/latest/meta-data",
                "http://203.0.113.9/hook",  // not https
                "https://user:password@example.com/hook",
            ]
            var answers: Set<String> = []
            for url in refused {
                let response = try await harness.request(
                    .put, "/v1/webhook", json: #"{"url":"\#(url)","secret":"\#(WebhookFixtures.secret)"}"#, token: company)
                #expect(response.status == .unprocessableContent, "\(url): \(response.status)")
                answers.insert(harness.text(response))
            }
            #expect(answers.count == 1, "different answers: \(answers.sorted())")
            #expect(try await harness.int("SELECT count(*) FROM webhooks") == 0)
        }
    }
}

/// The delivery loop reuses a verdict on a receiver's URL for `urlRecheck`, not for longer.
@Suite("Webhook URL policy: recent verdicts")
struct RecentURLChecksTests {
    @Test("a verdict is reused within its validity, reached again after it, and a changed answer is then seen")
    func reuseWithinValidity() async throws {
        let answers = Mutex((checks: 0, allowed: true))
        let checks = RecentURLChecks(validity: .seconds(1)) { url in
            let allowed = answers.withLock {
                $0.checks += 1
                return $0.allowed
            }
            return allowed ? .success(URL(string: url)!) : .failure(.notPublic)
        }
        let start = ContinuousClock.now
        let url = "https://hooks.example.com/d4h"
        #expect(try await checks.verdict(on: url, now: start).get() == URL(string: url))
        // The host now resolves to a private address: the recent verdict still holds, for at most a second.
        answers.withLock { $0.allowed = false }
        #expect(try await checks.verdict(on: url, now: start + .milliseconds(999)).get() == URL(string: url))
        #expect(answers.withLock(\.checks) == 1)
        await #expect(throws: WebhookURLPolicy.Rejection.notPublic) { try await checks.verdict(on: url, now: start + .seconds(1)).get() }
        #expect(answers.withLock(\.checks) == 2)
        // Another URL has a verdict of its own.
        await #expect(throws: WebhookURLPolicy.Rejection.notPublic) { try await checks.verdict(on: url + "/other", now: start + .seconds(1)).get() }
        #expect(answers.withLock(\.checks) == 3)
    }

    @Test("a name that did not resolve is asked again at the next post, not refused for a second")
    func resolutionFailureNotKept() async throws {
        let checks = Mutex(0)
        let recent = RecentURLChecks(validity: .seconds(1)) { url in
            checks.withLock { count in
                count += 1
                return count
            } == 1 ? .failure(.doesNotResolve) : .success(URL(string: url)!)
        }
        let start = ContinuousClock.now
        let url = "https://hooks.example.com/d4h"
        await #expect(throws: WebhookURLPolicy.Rejection.doesNotResolve) { try await recent.verdict(on: url, now: start).get() }
        #expect(try await recent.verdict(on: url, now: start + .milliseconds(10)).get() == URL(string: url))
        #expect(checks.withLock { $0 } == 2)
    }

    @Test("past its bound, the table drops the stale verdicts, not the fresh ones")
    func boundedTable() async throws {
        let checks = RecentURLChecks(validity: .seconds(1)) { .success(URL(string: $0)!) }
        let start = ContinuousClock.now
        for n in 0..<RecentURLChecks.pruneAbove {
            _ = await checks.verdict(on: "https://stale.example.com/\(n)", now: start)
        }
        _ = await checks.verdict(on: "https://fresh.example.com/", now: start + .seconds(2))
        #expect(checks.count == 1)
    }
}
