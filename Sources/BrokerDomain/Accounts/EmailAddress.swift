import Foundation

/// An email address that passed a pragmatic syntax check, lowercased for storage and lookup.
package struct EmailAddress: Sendable, Hashable, CustomStringConvertible {
    /// Lowercased: local parts are case-sensitive in theory, but no real mailbox relies on it, and a
    /// case-insensitive identity keeps "Anna@x.it" from registering twice.
    package let value: String

    private init(value: String) {
        self.value = value
    }

    package var description: String { value }

    package static let maximumLength = 254
    package static let maximumLocalPartLength = 64

    /// Accepts `local@domain` where the local part is dot-separated RFC 5322 atoms and the domain is at least
    /// two labels of ASCII letters, digits and inner hyphens. Surrounding whitespace is trimmed first.
    /// The address as an account would store it, or the text as given when it is no address: what a
    /// registration's receipt echoes, whatever became of the registration.
    package static func asStored(_ raw: String) -> String {
        (try? parse(raw).get())?.value ?? raw
    }

    package static func parse(_ raw: String) -> Result<EmailAddress, EmailAddressError> {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return .failure(.empty) }
        // Checked first: a CR or LF that reached an activation mail's headers would let the sender add headers.
        guard !trimmed.unicodeScalars.contains(where: isSpaceOrControl) else {
            return .failure(.forbiddenCharacter)
        }
        guard trimmed.utf8.count <= maximumLength else { return .failure(.tooLong) }

        let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .failure(.notOneAtSign) }
        let local = parts[0]
        let domain = parts[1]

        guard !local.isEmpty else { return .failure(.emptyLocalPart) }
        guard local.utf8.count <= maximumLocalPartLength else { return .failure(.localPartTooLong) }
        guard isDotAtom(local) else { return .failure(.badLocalPart) }
        guard isHostName(domain) else { return .failure(.badDomain) }

        // Everything left is ASCII, so lowercasing cannot change the length checked above.
        return .success(EmailAddress(value: trimmed.lowercased()))
    }

    private static func isSpaceOrControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace || scalar.properties.generalCategory == .control
            || scalar.properties.generalCategory == .format
    }

    /// RFC 5322 "atext" plus single inner dots; quoted local parts are refused as nobody needs them here.
    private static func isDotAtom(_ local: Substring) -> Bool {
        let atoms = local.split(separator: ".", omittingEmptySubsequences: false)
        return atoms.allSatisfy { atom in
            !atom.isEmpty && atom.unicodeScalars.allSatisfy { isASCIIAlphanumeric($0) || atextSymbols.contains($0) }
        }
    }

    private static let atextSymbols = Set("!#$%&'*+-/=?^_`{|}~".unicodeScalars)

    /// At least two labels of 1–63 ASCII letters, digits and hyphens, none starting or ending with a hyphen.
    /// Internationalised domains are accepted in their punycode ("xn--") form only.
    private static func isHostName(_ domain: Substring) -> Bool {
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        return labels.allSatisfy { label in
            (1...63).contains(label.utf8.count)
                && label.first != "-" && label.last != "-"
                && label.unicodeScalars.allSatisfy { isASCIIAlphanumeric($0) || $0 == "-" }
        }
    }

    private static func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }
}
