/// Why a consent receipt does not verify, in words for whoever checks it (`d4h consent verify`, the API's
/// check). Each case is one rule of `ConsentReceiptJWS.verify`.
package enum ConsentReceiptInvalid: Error, Equatable, CustomStringConvertible {
    /// Not three base64url parts separated by dots, or a part that is not canonical base64url.
    case malformed(String)
    /// The protected header is not `{"alg":"EdDSA","typ":"consent-receipt+jwt","kid":…}`.
    case badHeader(String)
    /// The header names a key (`kid`) that none of the trusted keys is.
    case unknownKey(String)
    /// The signature does not verify against the key the header names.
    case badSignature
    /// The signature holds, but the claims are not a receipt's (a missing or ill-formed claim).
    case badClaims(String)
    /// The receipt was issued by another server than the one checking it.
    case wrongIssuer(String)
    /// The key given to check with is not an Ed25519 public key (or no JWK set of one).
    case badKey(String)

    package var description: String {
        switch self {
        case .malformed(let why): "not a compact JWS: \(why)"
        case .badHeader(let why): "the header is not a consent receipt's: \(why)"
        case .unknownKey(let kid): "signed with key \(kid), which is not among the trusted keys"
        case .badSignature: "the signature does not verify: the receipt was changed after signing, or signed by another key"
        case .badClaims(let why): "the claims are not a consent receipt's: \(why)"
        case .wrongIssuer(let issuer): "issued by \(issuer), not by this server"
        case .badKey(let why): "the key to check with is \(why)"
        }
    }
}
