import Foundation

/// The name a runner chooses for spectators (issue 19), and the rule that it never passes for a bib
/// (issue 27): spectators know runners by bib, so "Bib 1", or any lookalike of it, would let one runner pose
/// as another. Lookalikes are folded before the check: compatibility forms (NFKC: "Ｂｉｂ １", "𝐁𝐢𝐛 𝟏"), invisible
/// characters ("Bib\u{AD} 1", "Bib \u{2060}1"), and Unicode's confusables ("Вib 1" with a Cyrillic В, "Βib 1"
/// with a Greek Β). Spectators see the bib beside every name as well (`RunParticipant.publicName`), so no
/// name stands alone.
enum DisplayName {
    static let length = 1...40

    /// The name as it is stored and shown, or `RunError.invalid` naming why not: NFKC, without invisible characters
    /// (format characters and default-ignorable code points: a right-to-left override would reorder what
    /// follows the name, a zero-width space hide a difference), trimmed; 1–40 characters, no control
    /// characters or line breaks, and no bib number in it.
    static func validated(_ text: String) throws(RunError) -> String {
        let name = String(String.UnicodeScalarView(text.precomposedStringWithCompatibilityMapping.unicodeScalars.filter { !invisible($0) }))
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let breaks: Set<Unicode.GeneralCategory> = [.control, .lineSeparator, .paragraphSeparator]
        guard length.contains(name.count), !name.unicodeScalars.contains(where: { breaks.contains($0.properties.generalCategory) }) else {
            throw .invalid([FieldError(field: "displayName", message: "must be 1–40 characters, without control characters")])
        }
        guard !containsBib(name) else {
            throw .invalid([FieldError(field: "displayName", message: "must not be or contain a bib number, or look like one")])
        }
        return name
    }

    static func invisible(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isDefaultIgnorableCodePoint || scalar.properties.generalCategory == .format
    }

    /// Whether the name reads as "Bib" and a number, alone or within it ("Bib 7", "BIB#7", "Laura · Bib 3"),
    /// once folded: NFKC, invisible characters dropped, the skeleton, combining marks dropped ("Bi̇b").
    /// "Bib" is matched in any case ("bIb" and "BIB" have skeletons of their own: I looks like l), a number is
    /// any digit or a lookalike of one (l, I, O), and what separates them may be spaces, punctuation or symbols.
    static func containsBib(_ name: String) -> Bool {
        let folded = fold(name)
        var index = 0
        while index < folded.count {
            defer { index += 1 }
            guard index == 0 || !wordLike(folded[index - 1]) else { continue }
            for bib in bibs where folded[index...].starts(with: bib) {
                var end = index + bib.count
                while end < folded.count, separator(folded[end]) { end += 1 }
                let digitsStart = end
                while end < folded.count, digitLike(folded[end]) { end += 1 }
                guard end == folded.count || !wordLike(folded[end]) else { continue }
                // "Bib" with no number is refused only as the whole name.
                if end > digitsStart || (index == 0 && end == folded.count) { return true }
            }
        }
        return false
    }

    /// The name as the check reads it.
    static func fold(_ text: String) -> [Unicode.Scalar] {
        let visible = String(String.UnicodeScalarView(text.precomposedStringWithCompatibilityMapping.unicodeScalars.filter { !invisible($0) }))
        return Confusables.skeleton(visible).unicodeScalars.filter {
            let category = $0.properties.generalCategory
            return category != .nonspacingMark && category != .enclosingMark && !invisible($0)
        }
    }

    /// "bib" in each of its eight cases, folded.
    static let bibs: [[Unicode.Scalar]] = (0..<8).map { mask in
        fold(String(zip("bib", 0..<3).map { letter, position in mask & (1 << position) == 0 ? letter : Character(letter.uppercased()) }))
    }

    /// The digits, folded ("0" is O, "1" is l). Not the lowercase o: "Bibo" is a name.
    static let digits: Set<Unicode.Scalar> = Set((0...9).flatMap { fold(String($0)) })

    static func digitLike(_ scalar: Unicode.Scalar) -> Bool {
        digits.contains(scalar) || scalar.properties.numericType != nil
    }

    static func wordLike(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || scalar.properties.numericType != nil
    }

    static func separator(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .spaceSeparator, .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
            .finalPunctuation, .otherPunctuation, .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
            true
        default: false
        }
    }
}
