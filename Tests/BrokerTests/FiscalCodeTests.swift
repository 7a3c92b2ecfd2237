import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// The first 15 characters of a code followed by the check character computed for them.
private func completed(_ first15: String) throws -> String {
    let check = try #require(FiscalCode.checkCharacter(for: first15))
    return first15 + String(check)
}

private func date(_ iso: String) throws -> CalendarDate {
    try #require(CalendarDate(iso: iso))
}

@Suite struct FiscalCodeTests {
    // MARK: Valid codes

    @Test func marioRossiIsValidAndDecodes() throws {
        let code = try FiscalCode.parse("RSSMRA85T10A562S").get()
        #expect(code.value == "RSSMRA85T10A562S")
        #expect(code.encodedBirth == FiscalCode.EncodedBirth(yearOfCentury: 85, month: 12, day: 10, sex: .male))
        #expect(code.mismatches(birthDate: try date("1985-12-10"), sex: .male) == [])
    }

    /// The worked example on Italian Wikipedia: Matteo Moretti, born in Milan on 9 April 1925.
    @Test func publishedExampleIsValid() throws {
        let code = try FiscalCode.parse("MRTMTT25D09F205Z").get()
        #expect(code.encodedBirth == FiscalCode.EncodedBirth(yearOfCentury: 25, month: 4, day: 9, sex: .male))
        #expect(code.mismatches(birthDate: try date("1925-04-09"), sex: .male) == [])
    }

    @Test(arguments: [
        ("RSSMRA85T10A562", Character("S")),
        ("MRTMTT25D09F205", Character("Z")),
        ("rssmra85t10a562", Character("S")),
        ("BNCLRA90A41F205", Character("I")),
    ])
    func checkCharacterOfKnownPrefixes(first15: String, expected: Character) {
        #expect(FiscalCode.checkCharacter(for: first15) == expected)
    }

    @Test(arguments: ["", "RSSMRA85T10A56", "RSSMRA85T10A562S", "RSSMRA85T10A56-", "RSSMRÀ85T10A562"])
    func checkCharacterNeedsFifteenASCIILettersOrDigits(first15: String) {
        #expect(FiscalCode.checkCharacter(for: first15) == nil)
    }

    @Test func womanHasFortyAddedToTheDay() throws {
        let raw = try completed("BNCLRA90A41F205")
        #expect(raw == "BNCLRA90A41F205I")
        let code = try FiscalCode.parse(raw).get()
        #expect(code.encodedBirth == FiscalCode.EncodedBirth(yearOfCentury: 90, month: 1, day: 1, sex: .female))
        #expect(code.mismatches(birthDate: try date("1990-01-01"), sex: .female) == [])
        #expect(code.mismatches(birthDate: try date("1990-01-01"), sex: .male) == [.sex])
    }

    @Test(arguments: [("01", 1, Sex.male), ("31", 31, .male), ("41", 1, .female), ("71", 31, .female)])
    func dayBoundaries(day: String, expectedDay: Int, expectedSex: Sex) throws {
        let code = try FiscalCode.parse(completed("BNCLRA90A\(day)F205")).get()
        #expect(code.encodedBirth.day == expectedDay)
        #expect(code.encodedBirth.sex == expectedSex)
    }

    @Test(arguments: zip(Array("ABCDEHLMPRST"), 1...12))
    func monthLetters(letter: Character, month: Int) throws {
        let code = try FiscalCode.parse(completed("RSSMRA85\(letter)10A562")).get()
        #expect(code.encodedBirth.month == month)
    }

    @Test(arguments: [" RSSMRA85T10A562S", "rssmra85t10a562s", "RssMra85t10A562s\n", "\trssmra85T10a562S  "])
    func inputIsTrimmedAndUppercased(raw: String) throws {
        let code = try FiscalCode.parse(raw).get()
        let canonical = try FiscalCode.parse("RSSMRA85T10A562S").get()
        #expect(code.value == "RSSMRA85T10A562S")
        #expect(code == canonical)
    }

    // MARK: Omocodia

    /// Substitutions applied right to left, as the Agenzia delle Entrate issues them, plus one out of order.
    @Test(arguments: [
        "RSSMRA85T10A56N",
        "RSSMRA85T10A5SN",
        "RSSMRA85T10ARSN",
        "RSSMRA85T1LARSN",
        "RSSMRA85TMLARSN",
        "RSSMRA8RTMLARSN",
        "RSSMRAURTMLARSN",
        "RSSMRAU5T10A562",
    ])
    func omocodiaVariantDecodesToTheSameBirth(first15: String) throws {
        let raw = try completed(first15)
        let code = try FiscalCode.parse(raw).get()
        let plain = try FiscalCode.parse("RSSMRA85T10A562S").get()
        // The substitution letters are part of the code's identity and are kept.
        #expect(code.value == raw)
        #expect(code != plain)
        #expect(code.encodedBirth == FiscalCode.EncodedBirth(yearOfCentury: 85, month: 12, day: 10, sex: .male))
        #expect(code.mismatches(birthDate: try date("1985-12-10"), sex: .male) == [])
    }

    @Test func omocodiaVariantNeedsItsOwnCheckCharacter() {
        #expect(FiscalCode.checkCharacter(for: "RSSMRA85T10A56N") == "H")
        #expect(FiscalCode.parse("RSSMRA85T10A56NS") == .failure(.badCheckCharacter))
        #expect((try? FiscalCode.parse("RSSMRA85T10A56NH").get()) != nil)
    }

    @Test func omocodiaLettersEncodeWomensDays() throws {
        // Day 41 written as "QM" (4 → Q, 1 → M).
        let code = try FiscalCode.parse(completed("BNCLRA90AQMF205")).get()
        #expect(code.encodedBirth == FiscalCode.EncodedBirth(yearOfCentury: 90, month: 1, day: 1, sex: .female))
    }

    // MARK: Invalid codes

    @Test(arguments: Array("ABCDEFGHIJKLMNOPQRTUVWXYZ"))
    func wrongCheckCharacter(check: Character) {
        #expect(FiscalCode.parse("RSSMRA85T10A562\(check)") == .failure(.badCheckCharacter))
    }

    @Test(arguments: ["", "RSSMRA85T10A562", "RSSMRA85T10A562SS", "RSSMRA85T10A 562S", "RSSMRA85T10A562S0000"])
    func wrongLength(raw: String) {
        #expect(FiscalCode.parse(raw) == .failure(.wrongLength))
    }

    @Test(arguments: Array("FGIJKNOQUVWXYZ"))
    func badMonthLetter(letter: Character) throws {
        let raw = try completed("RSSMRA85\(letter)10A562")
        #expect(FiscalCode.parse(raw) == .failure(.badMonth))
    }

    @Test(arguments: [
        "R5SMRA85T10A562",  // digit among the name letters
        "RSSMRA8AT10A562",  // A is not an omocodia letter
        "RSSMRA85T10A56Z",  // nor is Z
        "RSSMRA85110A562",  // digit where the month letter goes
        "RSSMRA85T101562",  // digit where the place letter goes
    ])
    func badLayout(first15: String) throws {
        let raw = try completed(first15)
        #expect(FiscalCode.parse(raw) == .failure(.badLayout))
    }

    @Test(arguments: ["RSSMRA85T10A5621", "RSSMRÀ85T10A562S", "RSSMRA85T10A562-", "RSSMRA85T10A562ß"])
    func badLayoutWithoutCheckCharacter(raw: String) {
        #expect(FiscalCode.parse(raw) == .failure(.badLayout))
    }

    @Test(arguments: ["00", "32", "39", "40", "72", "99", "LL"])
    func dayOutOfRange(day: String) throws {
        let raw = try completed("RSSMRA85T\(day)A562")
        #expect(FiscalCode.parse(raw) == .failure(.badDay))
    }

    // MARK: Agreement with birth date and sex

    @Test(arguments: [
        ("1986-12-10", Sex.male, [FiscalCodeMismatch.birthYear]),
        ("1985-11-10", .male, [.birthMonth]),
        ("1985-12-11", .male, [.birthDay]),
        ("1985-12-10", .female, [.sex]),
        ("2000-01-01", .female, [.birthYear, .birthMonth, .birthDay, .sex]),
        // The code holds only the last two digits of the year.
        ("1885-12-10", .male, []),
        ("2085-12-10", .male, []),
    ])
    func mismatchesWithMarioRossi(birthDate: String, sex: Sex, expected: [FiscalCodeMismatch]) throws {
        let code = try FiscalCode.parse("RSSMRA85T10A562S").get()
        #expect(code.mismatches(birthDate: try date(birthDate), sex: sex) == expected)
    }

    @Test func messages() {
        #expect(FiscalCodeError.wrongLength.message == "must be 16 characters")
        #expect(FiscalCodeError.badCheckCharacter.message == "check character does not match")
        let errors: [FiscalCodeError] = [.wrongLength, .badLayout, .badMonth, .badDay, .badCheckCharacter]
        #expect(Set(errors.map(\.message)).count == errors.count)
        #expect(Set(FiscalCodeMismatch.allCases.map(\.message)).count == FiscalCodeMismatch.allCases.count)
    }
}

@Suite struct CalendarDateTests {
    @Test(arguments: ["1985-12-10", "2024-02-29", "2000-02-29", "2023-02-28", "2024-04-30", "0001-01-01", "9999-12-31"])
    func validDatesRoundTrip(iso: String) throws {
        let parsed = try #require(CalendarDate(iso: iso))
        #expect(parsed.description == iso)
    }

    @Test func fieldsAreParsed() throws {
        let parsed = try #require(CalendarDate(iso: "1985-12-10"))
        #expect(parsed.year == 1985)
        #expect(parsed.month == 12)
        #expect(parsed.day == 10)
    }

    @Test(arguments: [
        "2023-02-29", "1900-02-29", "2024-02-30", "2024-04-31", "2024-13-01", "2024-00-10", "2024-01-00",
        "2024-01-32", "0000-01-01", "2024-1-01", "24-01-01", "2024/01/01", "2024-01-01T00:00:00Z", "",
        " 2024-01-01", "+024-01-01", "2024-0a-01", "２０２４-01-01",
    ])
    func invalidDates(iso: String) {
        #expect(CalendarDate(iso: iso) == nil)
    }

    @Test func descriptionIsZeroPadded() throws {
        let early = try #require(CalendarDate(year: 5, month: 3, day: 7))
        #expect(early.description == "0005-03-07")
    }

    @Test func ordering() throws {
        let dates = try ["1986-01-01", "1985-12-11", "1985-12-10", "1985-11-30"].map(date)
        #expect(dates.sorted().map(\.description) == ["1985-11-30", "1985-12-10", "1985-12-11", "1986-01-01"])
        let earlier = try date("1985-12-10")
        let later = try date("1985-12-11")
        #expect(earlier < later)
        #expect(!(later < earlier))
        #expect(!(earlier < earlier))
    }

    @Test func dayOfAnInstantDependsOnTheTimeZone() throws {
        // 2024-02-28T23:30:00Z
        let instant = Date(timeIntervalSince1970: 1_709_163_000)
        let utc = try #require(TimeZone(secondsFromGMT: 0))
        let romeInWinter = try #require(TimeZone(secondsFromGMT: 3600))
        #expect(CalendarDate(instant, in: utc).description == "2024-02-28")
        #expect(CalendarDate(instant, in: romeInWinter).description == "2024-02-29")
    }

    @Test func todayIsTheCurrentUTCDay() throws {
        let before = CalendarDate(Date(), in: try #require(TimeZone(secondsFromGMT: 0)))
        let today = CalendarDate.today
        // Allows for midnight passing between the two readings.
        #expect(today >= before)
        #expect(today.description.count == 10)
        #expect(CalendarDate(iso: today.description) == today)
    }

    @Test(arguments: [(2024, true), (2000, true), (1900, false), (2023, false), (1600, true), (2100, false)])
    func leapYears(year: Int, isLeap: Bool) {
        #expect(CalendarDate.isLeapYear(year) == isLeap)
        #expect(CalendarDate.numberOfDays(inMonth: 2, year: year) == (isLeap ? 29 : 28))
    }
}
