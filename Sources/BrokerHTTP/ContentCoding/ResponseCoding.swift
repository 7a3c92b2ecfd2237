import Foundation
import HTTPTypes
import OpenAPIRuntime

/// The content coding of the streamed downloads (`StreamingEndpoints`): zstd for a client whose
/// `Accept-Encoding` names it, the bytes as they are otherwise.
///
/// Only zstd: a FHIR download of a million samples is about 800 MB of Observations that repeat nearly every
/// byte, which zstd's fastest level writes as 6 MB in a fifth of a second of one core, where gzip's took
/// 2.4 s (`bench/README.md`): offered to every client that sends `gzip` by default, gzip would cost the
/// server more than the bytes it saves on a fast network. A `*` is not taken as zstd either: a client gets
/// a coding only by naming it.
///
/// Compression and secrets (BREACH): a compressed body's length says how much of it repeats, so a body that
/// puts text someone else chose beside a secret lets whoever sees its length on the wire test guesses of the
/// secret. A company's download holds the person's readings, a pseudonym and the company's own sealed cursor;
/// the FHIR forms of a person's export their readings and account. The person's JSON export also holds the
/// companies' names and purposes beside the profile, so it is sent as it is (`Download.compressible`).
enum ResponseCoding {
    /// Whether `acceptEncoding` (the request's header, all its lines joined) takes zstd: listed, with a
    /// `q` above 0 or none.
    static func acceptsZstd(_ acceptEncoding: String?) -> Bool {
        guard let acceptEncoding else { return false }
        for entry in acceptEncoding.split(separator: ",") {
            let parts = entry.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let coding = parts.first, coding.lowercased() == "zstd" else { continue }
            guard let weight = parts.dropFirst().first(where: { $0.lowercased().hasPrefix("q=") }) else { return true }
            // A q that is no qvalue is not a weight the client meant: no zstd.
            guard let q = qvalue(weight.dropFirst(2)) else { return false }
            return q > 0
        }
        return false
    }

    /// A weight as RFC 9110 §12.4.2 writes it, `0` to `1` with at most three decimals (`0.5`, `1.000`), or
    /// nil. Not whatever `Double` reads (`1e-3`, `0x1p-1`, `nan`), which no client sends as a weight.
    static func qvalue(_ text: some StringProtocol) -> Double? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, whole == "0" || whole == "1" else { return nil }
        let decimals = parts.count == 2 ? parts[1] : ""
        guard parts.count == 1 || (1...3).contains(decimals.count), decimals.allSatisfy({ $0 >= "0" && $0 <= "9" }) else { return nil }
        guard let value = Double(text), value <= 1 else { return nil }
        return value
    }

    /// `response` as sent to a client whose request said `acceptEncoding`: a successful body compressed when
    /// the client takes zstd, and in any case marked as depending on `Accept-Encoding` for caches.
    static func encode(_ head: HTTPResponse, _ body: HTTPBody?, acceptEncoding: String?) -> (HTTPResponse, HTTPBody?) {
        guard head.status == .ok, let body, head.headerFields[.contentEncoding] == nil else { return (head, body) }
        var head = head
        head.headerFields.append(HTTPField(name: .vary, value: "Accept-Encoding"))
        guard acceptsZstd(acceptEncoding) else { return (head, body) }
        head.headerFields[.contentEncoding] = "zstd"
        head.headerFields[.contentLength] = nil
        return (head, HTTPBody(ZstdBody(content: body), length: .unknown, iterationBehavior: .single))
    }
}
