import BrokerDomain
import BrokerTestSupport

/// Valid *codici fiscali* for synthetic people: the birth part agrees with their birth date and sex, and the six
/// name letters spell a serial number, which is what makes every person of a population distinct.
package enum SyntheticFiscalCode {
    /// How many serials six letters can spell (26^6, about 309 million).
    package static let serialCount = 308_915_776

    /// Municipal codes of large Italian towns (Rome, Milan, Naples, Turin, Palermo, Genoa, Bologna, Florence, Bari,
    /// Catania, Venice, Verona, Messina, Padua, Trieste, Brescia), so the place part looks like a real one.
    static let places = [
        "H501", "F205", "F839", "L219", "G273", "D969", "A944", "D612",
        "A662", "C351", "L736", "L781", "F158", "G224", "L424", "B157",
    ]

    private static let monthLetters = Array("ABCDEHLMPRST")

    /// The code for serial `serial` (0..<serialCount). Only the check character is computed by `FiscalCode`,
    /// the same rule registration validates with.
    package static func make(serial: Int, birthDate: CalendarDate, sex: Sex, place: String) -> String {
        precondition((0..<serialCount).contains(serial) && place.utf8.count == 4)
        var letters = [Character](repeating: "A", count: 6)
        var rest = serial
        for index in (0..<6).reversed() {
            letters[index] = Character(Unicode.Scalar(UInt8(ascii: "A") + UInt8(rest % 26)))
            rest /= 26
        }
        let day = birthDate.day + (sex == .female ? 40 : 0)
        let first15 =
            String(letters) + twoDigits(birthDate.year % 100) + String(monthLetters[birthDate.month - 1])
            + twoDigits(day) + place
        // `first15` is 15 ASCII letters and digits by construction, so there is always a check character.
        return first15 + String(FiscalCode.checkCharacter(for: first15)!)
    }

    private static func twoDigits(_ number: Int) -> String {
        number < 10 ? "0\(number)" : "\(number)"
    }
}
