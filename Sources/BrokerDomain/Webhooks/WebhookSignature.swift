import Crypto
import Foundation

/// The `Data4Help-Signature` header of a webhook delivery: `t=<unix seconds>,v1=<hex HMAC-SHA256>`.
///
/// The MAC covers `"<t>.<body>"` (the decimal timestamp, a dot, the raw body bytes) keyed with the
/// webhook's secret, so a receiver can tell the body came from Data4Help and is recent (the timestamp
/// cannot be changed without breaking the MAC). A receiver should:
/// 1. read the raw body bytes, before any JSON parsing;
/// 2. call `verify(header:body:secret:)` (or recompute the HMAC itself and compare in constant time);
/// 3. reject timestamps older than a few minutes (replay), and de-duplicate on `Data4Help-Event-Id`
///    (delivery is at least once).
package enum WebhookSignature {
    package static let headerName = "Data4Help-Signature"
    package static let eventIDHeaderName = "Data4Help-Event-Id"
    /// How far a signature's time may be from the receiver's clock by default.
    package static let defaultTolerance: TimeInterval = 300

    /// The header value for `body` signed at `timestamp` (unix seconds).
    package static func header(body: some DataProtocol, secret: String, timestamp: Int) -> String {
        "t=\(timestamp),v1=\(hex(mac(body: body, secret: secret, timestamp: timestamp)))"
    }

    /// Whether `header` is a valid signature of `body` with `secret`, made within `tolerance` seconds of
    /// `now`. Several `v1=` entries are allowed (any one may match); unknown schemes are ignored.
    /// The receiver's side (the benchmark's receiver, tests): `now` defaults to the receiver's own clock, the
    /// system's, not the server's injected one.
    package static func verify(
        header: String, body: some DataProtocol, secret: String, tolerance: TimeInterval = defaultTolerance,
        now: Date = Date()
    ) -> Bool {
        var timestamp: Int?
        var candidates: [[UInt8]] = []
        for part in header.split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            switch pair[0] {
            case "t": timestamp = Int(pair[1])
            case "v1": if let bytes = bytes(hex: pair[1]) { candidates.append(bytes) }
            default: continue
            }
        }
        guard let timestamp, abs(now.timeIntervalSince1970 - Double(timestamp)) <= tolerance else { return false }
        let key = SymmetricKey(data: Data(secret.utf8))
        let message = Data("\(timestamp).".utf8) + Data(body)
        // The library's comparison runs in constant time, so timing does not reveal how much matched.
        return candidates.contains { HMAC<SHA256>.isValidAuthenticationCode($0, authenticating: message, using: key) }
    }

    static func mac(body: some DataProtocol, secret: String, timestamp: Int) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: Data(secret.utf8)))
        hmac.update(data: Data("\(timestamp).".utf8))
        hmac.update(data: body)
        return Array(hmac.finalize())
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    static func bytes(hex text: Substring) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0, !utf8.isEmpty else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var result: [UInt8] = []
        result.reserveCapacity(utf8.count / 2)
        for index in stride(from: 0, to: utf8.count, by: 2) {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            result.append(high << 4 | low)
        }
        return result
    }
}
