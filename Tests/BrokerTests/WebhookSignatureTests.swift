import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

@Suite("Webhook signatures")
struct WebhookSignatureTests {
    let secret = "whsec_test_0123456789"
    let body = Data(#"{"id":"x"}"#.utf8)
    let signedAt = Date(timeIntervalSince1970: 1_700_000_000)

    @Test("the header is t=<seconds>,v1=<hex HMAC-SHA256 of \"<t>.<body>\">, as an independent HMAC computes it")
    func knownVector() {
        // python3 -c 'import hmac,hashlib;print(hmac.new(b"whsec_test_0123456789",b"1700000000.{\"id\":\"x\"}",hashlib.sha256).hexdigest())'
        #expect(
            WebhookSignature.header(body: body, secret: secret, timestamp: 1_700_000_000)
                == "t=1700000000,v1=f082be31b5a9fa327fe76cfdc7d206473fbc44da88a7328f2e70551df2f5e72f")
    }

    @Test("a receiver accepts its own deliveries and rejects other secrets, changed bodies and old signatures")
    func verify() {
        let header = WebhookSignature.header(body: body, secret: secret, timestamp: 1_700_000_000)
        #expect(WebhookSignature.verify(header: header, body: body, secret: secret, now: signedAt.addingTimeInterval(10)))
        #expect(!WebhookSignature.verify(header: header, body: body, secret: secret + "x", now: signedAt))
        #expect(!WebhookSignature.verify(header: header, body: Data(#"{"id":"y"}"#.utf8), secret: secret, now: signedAt))
        #expect(!WebhookSignature.verify(header: header, body: body, secret: secret, now: signedAt.addingTimeInterval(301)))
        #expect(!WebhookSignature.verify(header: header, body: body, secret: secret, now: signedAt.addingTimeInterval(-301)))
        #expect(WebhookSignature.verify(header: header, body: body, secret: secret, tolerance: 3600, now: signedAt.addingTimeInterval(3000)))
    }

    @Test("malformed headers are rejected; any of several v1 values may match")
    func headerForms() {
        let valid = WebhookSignature.header(body: body, secret: secret, timestamp: 1_700_000_000)
        let mac = String(valid.split(separator: "v1=")[1])
        for header in ["", "v1=\(mac)", "t=1700000000", "t=abc,v1=\(mac)", "t=1700000000,v1=zz", "t=1700000000,v1=\(mac.dropLast())"] {
            #expect(!WebhookSignature.verify(header: header, body: body, secret: secret, now: signedAt), "\(header)")
        }
        let rotated = "t=1700000000,v1=\(String(repeating: "0", count: 64)),v1=\(mac),v0=ignored"
        #expect(WebhookSignature.verify(header: rotated, body: body, secret: secret, now: signedAt))
        #expect(WebhookSignature.verify(header: "t=1700000000, v1=\(mac.uppercased())", body: body, secret: secret, now: signedAt))
    }
}
