import Crypto
import Foundation

/// A download cursor as the company sees it: the arrival number it stands for, sealed (AES-GCM) under the
/// server's `download_cursor_key` and bound to the request. Plain arrival numbers count every sample the
/// person uploaded, so the gap between two cursors told the company how much the person uploaded that the
/// request does not release; a sealed one tells it nothing, and cannot be forged or moved to another
/// request. The nonce is derived from the position, so one position always reads the same (a company may
/// compare two cursors for equality: "nothing new", which it learns from the download anyway).
enum DownloadCursor {
    /// What a cursor walks: a request's samples, or its positions. Sealed into the cursor, so one kind's is
    /// refused by the other's download (it would skip data, and comparing them would tell which came first).
    enum Kind: Sendable { case samples, positions }

    /// 48 URL-safe characters.
    static func seal(_ arrival: Int64, request: UUID, kind: Kind = .samples, key: SymmetricKey) -> String {
        let (sealing, nonceKey) = keys(key)
        let message = bytes(of: arrival)
        let context = self.context(request, kind)
        let nonceBytes = Array(HMAC<SHA256>.authenticationCode(for: context + message, using: nonceKey)).prefix(12)
        // A 12-byte nonce and a fresh key never fail.
        let box = try! AES.GCM.seal(message, using: sealing, nonce: try! AES.GCM.Nonce(data: nonceBytes), authenticating: context)
        return box.combined!.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The arrival number, or nil when the text is not a cursor this server gave out for this request.
    static func open(_ text: String, request: UUID, kind: Kind = .samples, key: SymmetricKey) -> Int64? {
        guard text.count == 48, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard let combined = Data(base64Encoded: standard),
            let box = try? AES.GCM.SealedBox(combined: combined),
            let message = try? AES.GCM.open(box, using: keys(key).sealing, authenticating: context(request, kind)),
            message.count == 8
        else { return nil }
        let arrival = message.reduce(Int64(0)) { $0 << 8 | Int64($1) }
        return arrival >= 0 ? arrival : nil
    }

    /// Separate keys for sealing and for deriving nonces, from the one server secret.
    private static func keys(_ key: SymmetricKey) -> (sealing: SymmetricKey, nonce: SymmetricKey) {
        (
            HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data("d4h download cursor seal".utf8), outputByteCount: 32),
            HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data("d4h download cursor nonce".utf8), outputByteCount: 32)
        )
    }

    private static func bytes(of arrival: Int64) -> Data {
        Data((0..<8).reversed().map { UInt8(truncatingIfNeeded: arrival >> ($0 * 8)) })
    }

    /// The request's bytes; a positions cursor's are followed by one more (samples' stay as they were issued).
    private static func context(_ request: UUID, _ kind: Kind) -> Data {
        kind == .positions ? bytes(of: request) + [0x50] : bytes(of: request)
    }

    private static func bytes(of request: UUID) -> Data {
        withUnsafeBytes(of: request.uuid) { Data($0) }
    }
}
