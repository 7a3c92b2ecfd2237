import Crypto
import Foundation

/// A consent receipt's wire form: a JWS in compact serialization (RFC 7515), signed with Ed25519 (`EdDSA`,
/// RFC 8037), its protected header exactly `{"alg":"EdDSA","kid":…,"typ":"consent-receipt+jwt"}`.
/// Verification trusts nothing the receipt says about itself until the signature holds: the header must be
/// exactly that (no `alg` but EdDSA, so no `none` and no HMAC under a public key; no other member, so no
/// `crit` or unencoded payload), its `kid` must name one of the keys the verifier was given, and the
/// signature must verify under that key over the header and payload as sent; only then are the claims read,
/// and they must be well formed (`ConsentReceiptClaims.checkWellFormed`).
package enum ConsentReceiptJWS {
    package static let type = "consent-receipt+jwt"
    package static let algorithm = "EdDSA"
    /// Far above any receipt the server signs (under 2 KiB), so a huge input is refused before any work.
    package static let maximumLength = 16 * 1024

    struct Header: Codable, Equatable {
        var alg: String
        var kid: String
        var typ: String
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    package static func sign(_ claims: ConsentReceiptClaims, with key: ConsentSigningKey) throws -> String {
        let header = Base64URL.encode(try encoder.encode(Header(alg: algorithm, kid: key.keyID, typ: type)))
        let payload = Base64URL.encode(try encoder.encode(claims))
        let signature = try key.sign(Data("\(header).\(payload)".utf8))
        return "\(header).\(payload).\(Base64URL.encode(signature))"
    }

    /// The receipt's claims when it verifies under one of `keys` (and, when given, was issued by `issuer`).
    package static func verify(_ jws: String, trusting keys: [ConsentSigningKey.PublicKey], issuer: String? = nil)
        throws(ConsentReceiptInvalid) -> ConsentReceiptClaims
    {
        let text = jws.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.utf8.count <= maximumLength else { throw .malformed("longer than \(maximumLength) bytes") }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("it has \(parts.count) part(s), not 3 separated by dots") }
        guard let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { throw .malformed("a part is not base64url without padding") }
        // Exactly the three members: a member this verifier does not understand (`crit`, `b64`, `jwk`, `x5u`)
        // must not be silently ignored.
        guard let members = try? JSONSerialization.jsonObject(with: headerBytes) as? [String: Any],
            Set(members.keys) == ["alg", "kid", "typ"], let header = try? JSONDecoder().decode(Header.self, from: headerBytes)
        else { throw .badHeader("it must be a JSON object of exactly alg, kid and typ") }
        guard header.alg == algorithm else { throw .badHeader("alg is \(header.alg), not \(algorithm)") }
        guard header.typ == type else { throw .badHeader("typ is \(header.typ), not \(type)") }
        guard let key = keys.first(where: { ConsentSigningKey.keyID(of: $0) == header.kid }) else { throw .unknownKey(header.kid) }
        guard signature.count == 64, key.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)) else {
            throw .badSignature
        }
        let claims: ConsentReceiptClaims
        do {
            claims = try JSONDecoder().decode(ConsentReceiptClaims.self, from: payloadBytes)
        } catch {
            throw .badClaims("the payload is not a receipt's JSON object (\(Self.why(error)))")
        }
        try claims.checkWellFormed()
        if let issuer, claims.iss != issuer { throw .wrongIssuer(claims.iss) }
        return claims
    }

    /// What a decoding error says, without Foundation's debug noise.
    private static func why(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "\(key.stringValue) is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context), DecodingError.dataCorrupted(let context):
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")) is of the wrong kind"
        default: "not JSON"
        }
    }
}
