import Foundation

/// An Italian *codice fiscale* of a natural person, validated and normalised to trimmed uppercase.
package struct FiscalCode: Sendable, Hashable, CustomStringConvertible {
    /// The code as issued, omocodia letters included: a code with substitutions is a different person's code
    /// than the one with plain digits, so it is never translated back for storage or lookup.
    package let value: String

    private init(value: String) {
        self.value = value
    }

    package var description: String { value }

    /// Validates length, layout, month letter, day and check character, in that order, and reports the first failure.
    package static func parse(_ raw: String) -> Result<FiscalCode, FiscalCodeError> {
        let scalars = normalised(raw)
        guard scalars.count == 16 else { return .failure(.wrongLength) }
        // Any non-ASCII scalar fails the layout below, so the narrowing never loses information that matters.
        let bytes = scalars.map { $0.isASCII ? UInt8($0.value) : 0 }

        for index in letterPositions where !isLetter(bytes[index]) {
            return .failure(.badLayout)
        }
        for index in digitPositions where digitValue(bytes[index]) == nil {
            return .failure(.badLayout)
        }
        guard isLetter(bytes[8]), isLetter(bytes[15]) else { return .failure(.badLayout) }
        guard monthLetters.contains(bytes[8]) else { return .failure(.badMonth) }

        let day = number(bytes, at: 9, 10)
        guard (1...31).contains(day) || (41...71).contains(day) else { return .failure(.badDay) }

        guard checkLetter(bytes[0..<15]) == bytes[15] else { return .failure(.badCheckCharacter) }
        return .success(FiscalCode(value: String(decoding: bytes, as: UTF8.self)))
    }

    /// The check character for the first 15 characters of a code (case-insensitive), or nil unless they are
    /// 15 ASCII letters or digits. Layout is not checked, so this also serves to build test codes.
    package static func checkCharacter(for first15: String) -> Character? {
        let scalars = normalised(first15)
        guard scalars.count == 15,
            scalars.allSatisfy({ $0.isASCII && (isLetter(UInt8($0.value)) || isDigit(UInt8($0.value))) })
        else { return nil }
        return Character(Unicode.Scalar(checkLetter(scalars.map { UInt8($0.value) }[...])))
    }

    /// What the code says about its holder's birth: the year only within its century, and the sex
    /// through the day (women's days are written plus 40).
    package struct EncodedBirth: Sendable, Hashable {
        package let yearOfCentury: Int
        package let month: Int
        package let day: Int
        package let sex: Sex

        package init(yearOfCentury: Int, month: Int, day: Int, sex: Sex) {
            self.yearOfCentury = yearOfCentury
            self.month = month
            self.day = day
            self.sex = sex
        }
    }

    package var encodedBirth: EncodedBirth {
        // `value` passed `parse`, so every position decodes.
        let bytes = Array(value.utf8)
        let month = Self.monthLetters.firstIndex(of: bytes[8])! + 1
        let day = Self.number(bytes, at: 9, 10)
        return EncodedBirth(
            yearOfCentury: Self.number(bytes, at: 6, 7),
            month: month,
            day: day > 40 ? day - 40 : day,
            sex: day > 40 ? .female : .male
        )
    }

    /// The ways the code disagrees with a declared birth date and sex; empty when they agree.
    /// Only `year % 100` can be compared: the code does not say which century.
    package func mismatches(birthDate: CalendarDate, sex: Sex) -> [FiscalCodeMismatch] {
        let encoded = encodedBirth
        var result: [FiscalCodeMismatch] = []
        if encoded.yearOfCentury != birthDate.year % 100 { result.append(.birthYear) }
        if encoded.month != birthDate.month { result.append(.birthMonth) }
        if encoded.day != birthDate.day { result.append(.birthDay) }
        if encoded.sex != sex { result.append(.sex) }
        return result
    }

    // MARK: - Layout and tables

    private static let letterPositions = [0, 1, 2, 3, 4, 5, 11]
    /// Year, day and place-number positions; each may hold a digit or its omocodia substitute.
    private static let digitPositions = [6, 7, 9, 10, 12, 13, 14]
    /// January to December.
    private static let monthLetters = Array("ABCDEHLMPRST".utf8)
    /// Substitutes for 0–9, used when two people would otherwise get the same code (omocodia).
    private static let omocodiaLetters = Array("LMNPQRSTUV".utf8)
    /// Values of A–Z (and of 0–9, which count as A–J) in odd positions, counting from 1.
    private static let oddValues = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23]

    /// Sum of the odd- and even-position values of the first 15 characters, mod 26, as a letter.
    private static func checkLetter(_ first15: ArraySlice<UInt8>) -> UInt8 {
        var sum = 0
        for (offset, byte) in first15.enumerated() {
            // Digits weigh the same as the letters A–J in both tables.
            let rank = isDigit(byte) ? Int(byte - UInt8(ascii: "0")) : Int(byte - UInt8(ascii: "A"))
            // Offset 0 is position 1, which is odd.
            sum += offset % 2 == 0 ? oddValues[rank] : rank
        }
        return UInt8(ascii: "A") + UInt8(sum % 26)
    }

    /// A digit position's value, whether written as a digit or as its omocodia letter.
    /// The official substitution runs right to left, but any combination is accepted, as the brief asks.
    private static func digitValue(_ byte: UInt8) -> Int? {
        if isDigit(byte) { return Int(byte - UInt8(ascii: "0")) }
        return omocodiaLetters.firstIndex(of: byte)
    }

    private static func number(_ bytes: [UInt8], at tens: Int, _ units: Int) -> Int {
        digitValue(bytes[tens])! * 10 + digitValue(bytes[units])!
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// Trimmed, with ASCII letters uppercased; other scalars are left alone so that they fail validation
    /// rather than turn into something valid (`"ß".uppercased()` is `"SS"`).
    private static func normalised(_ raw: String) -> [Unicode.Scalar] {
        raw.trimmingCharacters(in: .whitespacesAndNewlines).unicodeScalars.map { scalar in
            ("a"..."z").contains(scalar) ? Unicode.Scalar(scalar.value - 32)! : scalar
        }
    }
}
