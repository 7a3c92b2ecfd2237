import Foundation

/// An Italian VAT number (*partita IVA*): 11 digits, the last a check digit, surrounding whitespace trimmed.
package struct VATNumber: Sendable, Hashable, CustomStringConvertible {
    package let value: String

    private init(value: String) {
        self.value = value
    }

    package var description: String { value }

    /// Validates length, digits and check digit, in that order, and reports the first failure.
    /// No "IT" prefix is accepted: the API asks for the 11 digits alone.
    package static func parse(_ raw: String) -> Result<VATNumber, VATNumberError> {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.unicodeScalars.count == 11 else { return .failure(.wrongLength) }
        guard let digits = asciiDigits(trimmed) else { return .failure(.notDigits) }
        // Eleven zeros pass the check-digit formula but are never issued.
        guard digits.contains(where: { $0 != 0 }) else { return .failure(.allZeros) }
        // The office code (digits 8–10) is not checked against the list of offices: that list changes over time.
        guard checkDigit(digits[0..<10]) == digits[10] else { return .failure(.badCheckDigit) }
        return .success(VATNumber(value: trimmed))
    }

    /// The check digit for the first 10 digits of a number, or nil unless given exactly 10 ASCII digits.
    package static func checkDigit(for first10: String) -> Int? {
        guard first10.unicodeScalars.count == 10, let digits = asciiDigits(first10) else { return nil }
        return checkDigit(digits[...])
    }

    /// Digits in odd positions (counting from 1) are added as they are; those in even positions are doubled,
    /// less 9 when that exceeds 9; the check digit brings the total to a multiple of 10.
    private static func checkDigit(_ first10: ArraySlice<Int>) -> Int {
        var sum = 0
        for (offset, digit) in first10.enumerated() {
            if offset % 2 == 0 {
                sum += digit
            } else {
                let doubled = digit * 2
                sum += doubled > 9 ? doubled - 9 : doubled
            }
        }
        return (10 - sum % 10) % 10
    }

    // ASCII only: `Character.isNumber` would let through Arabic-Indic and other digits.
    private static func asciiDigits(_ text: String) -> [Int]? {
        var digits: [Int] = []
        for byte in text.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            digits.append(Int(byte - UInt8(ascii: "0")))
        }
        return digits
    }
}
