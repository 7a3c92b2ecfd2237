import BrokerTestSupport
import HTTPTypes
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// `TRUSTED_PROXIES` and the client address it makes of a request (no server needed).
@Suite("Trusted proxies")
struct TrustedProxiesTests {
    private func client(_ proxies: String, peer: String?, forwarded: [String]) throws -> String {
        var headers = HTTPFields()
        for value in forwarded { headers.append(HTTPField(name: TrustedProxies.forwardedFor, value: value)) }
        return try TrustedProxies.parse(proxies).get().clientAddress(peer: peer, headers: headers)
    }

    @Test("without trusted proxies, the peer is the client whatever X-Forwarded-For says")
    func untrustedPeer() throws {
        #expect(try client("", peer: "192.0.2.10", forwarded: ["203.0.113.5"]) == "192.0.2.10")
        #expect(try client("10.0.0.0/8", peer: "192.0.2.10", forwarded: ["203.0.113.5"]) == "192.0.2.10")
    }

    @Test("from a trusted proxy, the right-most entry that is not a proxy; entries left of it are ignored")
    func rightMostUntrusted() throws {
        let proxies = "10.0.0.0/8, 2001:db8::/32"
        #expect(try client(proxies, peer: "10.0.0.1", forwarded: ["198.51.100.7, 203.0.113.5, 10.9.9.9"]) == "203.0.113.5")
        #expect(try client(proxies, peer: "10.0.0.1", forwarded: ["198.51.100.7", "203.0.113.5:4711"]) == "203.0.113.5")
        #expect(try client(proxies, peer: "2001:db8::1", forwarded: ["[2001:db8:ffff::2]:80", "[2a00::1]:443"]) == "2a00::1")
        #expect(try client(proxies, peer: "::ffff:10.1.1.1", forwarded: ["192.0.2.1"]) == "192.0.2.1")
        // No header, or only proxies in it: the last proxy is as far as anything is known.
        #expect(try client(proxies, peer: "10.0.0.1", forwarded: []) == "10.0.0.1")
        #expect(try client(proxies, peer: "10.0.0.1", forwarded: ["10.2.2.2"]) == "10.2.2.2")
        // Garbage ends the walk at the last trusted hop rather than believing what is left of it.
        #expect(try client(proxies, peer: "10.0.0.1", forwarded: ["203.0.113.5, not-an-address"]) == "10.0.0.1")
    }

    @Test("a TRUSTED_PROXIES entry that is not an address or a network is a configuration error naming it")
    func invalidSetting() {
        for bad in ["10.0.0.0/33", "example.com", "10.0.0.1/x", "::1/129"] {
            guard case .failure(let error) = TrustedProxies.parse("127.0.0.1, \(bad)") else {
                Issue.record("\(bad) was accepted")
                continue
            }
            #expect(error.description.contains("TRUSTED_PROXIES"))
        }
        #expect((try? TrustedProxies.parse(" 127.0.0.1 , ::1, 10.0.0.0/8 ").get())?.networks.count == 3)
    }
}
