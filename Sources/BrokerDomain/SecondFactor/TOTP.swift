import Crypto
import Foundation

/// RFC 6238 time-based one-time passwords as every authenticator app computes them by default: HMAC-SHA1,
/// six digits, 30-second steps counted from the Unix epoch (RFC 4226's dynamic truncation).
///
/// Computed here with swift-crypto's HMAC, which the domain already links, rather than with
/// `HummingbirdOTP`: that module depends on `HummingbirdAuth` and so on Hummingbird itself, which the
/// domain must never import (docs/architecture.md), and it takes the key as a `String`, which random key
/// bytes are not.
package struct TOTP: Sendable, Equatable {
    package static let digits = 6
    package static let stepSeconds = 30
    /// A code of the step before or after the server's is still accepted: a phone's clock a few seconds off,
    /// or a code typed as its step ended.
    package static let skewSteps = 1
    /// 160 bits, RFC 4226's recommended key length.
    package static let secretLength = 20

    package let secret: Data

    package init(secret: Data) { self.secret = secret }

    package static func generate() -> TOTP {
        var generator = SystemRandomNumberGenerator()
        return TOTP(secret: Data((0..<secretLength).map { _ in UInt8.random(in: .min ... .max, using: &generator) }))
    }

    /// The step (Unix time / 30 s) that `date` falls in.
    package static func step(at date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / Double(stepSeconds)).rounded(.down))
    }

    /// The code of `step`, zero-padded to six digits.
    package func code(step: Int64) -> String {
        let counter = withUnsafeBytes(of: UInt64(bitPattern: step).bigEndian) { Data($0) }
        let mac = Data(HMAC<Insecure.SHA1>.authenticationCode(for: counter, using: SymmetricKey(data: secret)))
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let truncated =
            (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        let value = truncated % 1_000_000
        let text = String(value)
        return String(repeating: "0", count: Self.digits - text.count) + text
    }

    package func code(at date: Date) -> String { code(step: Self.step(at: date)) }

    /// The step within the accepted window around `date` whose code `code` is, or nil. Only six ASCII digits
    /// can be a code; every step of the window is compared, so the time taken says nothing about which.
    package func matchingStep(of code: String, at date: Date) -> Int64? {
        guard code.utf8.count == Self.digits, code.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let now = Self.step(at: date)
        var found: Int64?
        for step in (now - Int64(Self.skewSteps))...(now + Int64(Self.skewSteps)) {
            let candidate = Data(self.code(step: step).utf8)
            // Constant-time comparison of the two codes.
            if candidate.withUnsafeBytes({ a in Data(code.utf8).withUnsafeBytes { b in safeCompare(a, b) } }) {
                found = found ?? step
            }
        }
        return found
    }

    /// The key as authenticator apps take it when typed in: RFC 4648 base32 without padding.
    package var base32Secret: String { Base32.encode(secret) }

    /// The Key URI Format authenticator apps read from a QR code: `otpauth://totp/Issuer:label?secret=…`.
    package func uri(issuer: String, account: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~@")
        let issuerText = issuer.addingPercentEncoding(withAllowedCharacters: allowed) ?? issuer
        let accountText = account.addingPercentEncoding(withAllowedCharacters: allowed) ?? account
        return "otpauth://totp/\(issuerText):\(accountText)?secret=\(base32Secret)&issuer=\(issuerText)"
            + "&algorithm=SHA1&digits=\(Self.digits)&period=\(Self.stepSeconds)"
    }
}

private func safeCompare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for index in 0..<a.count { difference |= a[index] ^ b[index] }
    return difference == 0
}
