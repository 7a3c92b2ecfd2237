import Foundation

/// A language the service speaks: the console's pages, the mails and the API's problem documents are each
/// written in every case. An account keeps one (its profile); a visitor's comes from `Accept-Language`.
/// Adding a case makes every exhaustive switch over it (catalogs, mails) fail to compile until it is written.
package enum Language: String, Sendable, Hashable, CaseIterable, Codable {
    case en
    case it

    /// What nothing else chooses: a visitor who names no language we speak, an account from before languages.
    package static let fallback: Language = .en

    /// The locale dates, times and numbers are written in (`it_IT`: "27 nov 2026, 14:05", a decimal comma).
    package var locale: Locale {
        switch self {
        case .en: Locale(identifier: "en_GB")
        case .it: Locale(identifier: "it_IT")
        }
    }

    /// The language's own name, for a language switch (each written as its speakers write it).
    package var nativeName: String {
        switch self {
        case .en: "English"
        case .it: "Italiano"
        }
    }

    /// A language tag as a form, a query or the API sends it (`it`, `IT`, `it-IT`, `en_GB`); nil for any other.
    package init?(tag: String) {
        let primary =
            tag.trimmingCharacters(in: .whitespaces).lowercased()
            .split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map(String.init) ?? ""
        self.init(rawValue: primary)
    }

    /// The language an `Accept-Language` header (RFC 9110 §12.5.4) prefers among ours: the highest q-value
    /// wins, the header's order breaks ties, `q=0` refuses a language, and `*` stands for any we speak not
    /// named otherwise. Nil header, garbage, or nothing of ours acceptable: `fallback`. Never throws: a
    /// header that cannot be read is a visitor who said nothing, not an error to answer.
    package init(acceptLanguage header: String?) {
        self = Self.preferred(acceptLanguage: header) ?? .fallback
    }

    /// The best of ours the header accepts, nil when it names none (so a caller can prefer its own default).
    package static func preferred(acceptLanguage header: String?) -> Language? {
        guard let header, header.utf8.count <= 1024 else { return nil }  // a bound on the work a header costs
        var best: (language: Language, q: Double)?
        var named = Set<Language>()
        var wildcardQ: Double?
        for range in header.split(separator: ",").prefix(32) {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = parts.first, !tag.isEmpty else { continue }
            var q = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if pair.count == 2, pair[0].lowercased() == "q" {
                    q = Double(pair[1]).map { min(max($0, 0), 1) } ?? 0
                }
            }
            if tag == "*" {
                wildcardQ = max(wildcardQ ?? 0, q)
                continue
            }
            guard let language = Language(tag: tag) else { continue }
            // A language's first range is its answer: `it-IT, it;q=0` is read as Italian, as its sender
            // put it first, and one language cannot outbid another by being named twice.
            guard named.insert(language).inserted else { continue }
            if q > 0, q > (best?.q ?? 0) { best = (language, q) }
        }
        if let wildcardQ, wildcardQ > 0, wildcardQ > (best?.q ?? 0),
            let unnamed = ([Language.fallback] + Language.allCases).first(where: { !named.contains($0) })
        {
            return unnamed
        }
        return best?.language
    }
}
