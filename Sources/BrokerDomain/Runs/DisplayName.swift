import Foundation

/// The name a runner chooses for spectators (issue 19), and the rule that it never passes for a bib
/// (issue 27): spectators know runners by bib, so "Bib 1", or any lookalike of it, would let one runner pose
/// as another. Spectators see the bib beside every name as well, the name isolated so that its direction
/// cannot reorder the bib (`RunParticipant.publicName`), so no name stands alone.
///
/// What is stored and what is checked differ. Stored: the name in NFKC without the characters that only
/// steer or hide (bidi controls, soft hyphens, zero-width spaces…); joiners stay, as spelling needs them
/// ("👩‍💻", Persian's ZWNJ). Checked: a fold of it that keeps only what spells "Bib" and a number.
enum DisplayName {
    /// In Unicode code points, as the database's `length()` counts them (0017's CHECK): a flag is two.
    static let length = 1...40

    /// The name as it is stored and shown, or `RunError.invalid` naming why not: cleaned (`cleaned`);
    /// 1–40 code points, no control characters or line breaks, and no bib number in it (`containsBib`).
    static func validated(_ text: String) throws(RunError) -> String {
        let name = cleaned(text)
        let breaks: Set<Unicode.GeneralCategory> = [.control, .lineSeparator, .paragraphSeparator]
        guard length.contains(name.unicodeScalars.count), !name.unicodeScalars.contains(where: { breaks.contains($0.properties.generalCategory) })
        else {
            throw .invalid([FieldError(field: "displayName", message: "must be 1–40 characters, without control characters")])
        }
        guard !containsBib(name) else {
            throw .invalid([FieldError(field: "displayName", message: "must not be or contain a bib number, or look like one")])
        }
        return name
    }

    /// NFKC, without `removed` characters, trimmed. Migration 0022 cleans names stored before alike.
    static func cleaned(_ text: String) -> String {
        String(String.UnicodeScalarView(text.precomposedStringWithCompatibilityMapping.unicodeScalars.filter { !removed($0) }))
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Characters that spell nothing: bidi controls (a right-to-left override would reorder what follows the
    /// name) and invisible separators (a soft hyphen or a zero-width space would hide a difference). Not the
    /// joiners (ZWJ, ZWNJ) nor variation selectors: emoji sequences and Persian or Indic spellings need them.
    static func removed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true  // bidi controls
        case 0x00AD, 0x180E, 0x200B, 0x2060...0x2064, 0xFEFF, 0xFFF9...0xFFFB: true  // invisible separators
        default: false
        }
    }

    /// Whether the name reads as a bib. The rule: in the name folded (`folded`: letters and digits only, each
    /// lookalike as what it looks like), a "bib" that starts a word — after anything that is not a letter or
    /// a digit, or with a capital B — and whose three letters may be spaced or dotted apart ("B i b", "B.i.b"),
    /// followed by
    /// - a digit of any script or another numeral ("Bib 7", "Bib ٧", "Bib 1०", "Bib 七", "Bib ⁷"), or
    /// - a letter that looks like a digit (l, I, O) starting a word of its own ("Bib l", "BIB I", "Bib O"), or
    /// - nothing: the end of the name ("Bib", "Laura Bib").
    /// So a name joined to "Bib" is a name ("Bibi 7", "Bibo", "Bibl", "Bibiana 7"), "bib" inside a word is
    /// not a bib ("Habib 7"), and what lies between "Bib" and its number does not matter ("Bib·7", "Bib ـ7",
    /// "Bib א7", which display order may show as "Bib 7").
    static func containsBib(_ name: String) -> Bool {
        let folded = folded(name)
        func next(_ index: Int) -> Int? { folded[index...].firstIndex { $0 != .boundary } }
        for (index, first) in folded.enumerated() {
            guard case .letter(let b, _) = first, b == "b" || b == "B" else { continue }
            guard b == "B" || index == 0 || folded[index - 1] == .boundary else { continue }
            guard let middle = next(index + 1), case .letter(let i, _) = folded[middle], i == "i" || i == "l",
                let last = next(middle + 1), case .letter(let b2, _) = folded[last], b2 == "b" || b2 == "B"
            else { continue }
            guard let after = next(last + 1) else { return true }
            switch folded[after] {
            case .digit: return true
            case .letter(let letter, let fromLetter) where letter == "l" || letter == "O":
                if folded[after - 1] == .boundary || !fromLetter { return true }
            default: break
            }
        }
        return false
    }

    /// One piece of a folded name.
    enum Folded: Equatable {
        /// A letter as its lookalike class reads it ("B", "b", "i", "l", "O"…), and whether it was a letter
        /// before folding ("|" was not).
        case letter(Unicode.Scalar, fromLetter: Bool)
        /// A digit of any script, or another numeral.
        case digit
        /// Anything else: spaces, punctuation, symbols, invisible characters, modifier letters ("ʼ", the
        /// tatweel), letters that look like a dot ("ꞏ"), letters of right-to-left scripts (display order
        /// moves them: "Bib א7" shows as "Bib 7א").
        case boundary
    }

    /// The name as the check reads it, scalar by scalar: decimal digits and digits (superscripts, circled)
    /// of any script are digits before anything else folds them into letters (UTS #39 has "٥" as "o");
    /// then NFKC ("Ｂｉｂ", "𝐁𝐢𝐛", "Ⅰ" as "I"), other numerals ("七") as digits, Unicode's confusables
    /// (UTS #39 skeletons: "Вib" with a Cyrillic В, "Βib" with a Greek Β, "I" as "l"), combining marks
    /// dropped ("Bi̇b"), the lookalikes of b, i and l the table lacks (`lookalikes`), everything else not a
    /// letter a boundary.
    static func folded(_ name: String) -> [Folded] {
        var folded: [Folded] = []
        for scalar in name.unicodeScalars {
            let wasLetter = scalar.properties.isAlphabetic
            if let type = scalar.properties.numericType, type == .decimal || type == .digit {
                folded.append(.digit)
                continue
            }
            for compatible in String(scalar).precomposedStringWithCompatibilityMapping.unicodeScalars {
                if compatible.properties.numericType != nil {
                    folded.append(.digit)
                    continue
                }
                for prototype in Confusables.skeleton(String(compatible)).unicodeScalars {
                    let category = prototype.properties.generalCategory
                    if category == .nonspacingMark || category == .enclosingMark || category == .spacingMark { continue }
                    let isLetter = [.uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .otherLetter].contains(category)
                    if let lookalike = lookalikes[prototype.value] {
                        folded.append(lookalike.map { .letter($0, fromLetter: wasLetter) } ?? .boundary)
                    } else if isLetter, !rightToLeft(prototype), !invisible(prototype) {
                        folded.append(.letter(prototype, fromLetter: wasLetter))
                    } else if prototype.properties.numericType != nil {
                        folded.append(.digit)
                    } else {
                        folded.append(.boundary)
                    }
                }
            }
        }
        return folded
    }

    /// Lookalikes whose prototypes in UTS #39 are not ASCII, so the table omits them: of b ("ʙ", "в", "ь",
    /// "🅱"), of i and l ("¡", "!"), and letters that look like a dot ("ꞏ"), which are boundaries (nil).
    static let lookalikes: [UInt32: Unicode.Scalar?] = [
        0x0299: "B", 0x1D03: "B", 0x0432: "B", 0x0243: "B", 0x0182: "B", 0x1F171: "B", 0x1F151: "B",
        0x044C: "b", 0x0180: "b", 0x0183: "b", 0x0253: "b",
        0x00A1: "i", 0x0021: "l", 0x01C3: "l",
        0xA78F: nil, 0x1427: nil, 0x119E: nil, 0x318D: nil,
    ]

    static func invisible(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isDefaultIgnorableCodePoint || scalar.properties.generalCategory == .format
    }

    /// Letters of the right-to-left scripts (Hebrew, Arabic, Syriac, Thaana, N'Ko and their neighbours and
    /// presentation forms), by block: Swift exposes no bidi class.
    static func rightToLeft(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0590...0x08FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF, 0x10800...0x10FFF, 0x1E800...0x1EFFF: true
        default: false
        }
    }
}
