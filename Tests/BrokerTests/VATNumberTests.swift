import BrokerTestSupport
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

@Suite struct VATNumberTests {
    /// Check digits worked out by hand: for 1234567890 the odd positions give 1+3+5+7+9 = 25, the even
    /// positions 4+8+3+7+0 = 22, total 47, check (10 - 7) % 10 = 3.
    @Test(arguments: ["12345678903", "00743110157", "00000000018"])
    func knownValidNumbers(raw: String) throws {
        let number = try VATNumber.parse(raw).get()
        #expect(number.value == raw)
    }

    @Test(arguments: [("1234567890", 3), ("0074311015", 7), ("0000000001", 8), ("9999999999", 0)])
    func checkDigitOfKnownPrefixes(first10: String, expected: Int) {
        #expect(VATNumber.checkDigit(for: first10) == expected)
    }

    @Test(arguments: ["0000000001", "1234567890", "9876543210", "0123456789", "0580000000", "1111111111"])
    func prefixWithComputedCheckDigitIsValid(first10: String) throws {
        let check = try #require(VATNumber.checkDigit(for: first10))
        #expect((0...9).contains(check))
        #expect((try? VATNumber.parse(first10 + String(check)).get()) != nil)
    }

    @Test(arguments: (0...9).filter { $0 != 3 })
    func wrongCheckDigit(last: Int) {
        #expect(VATNumber.parse("1234567890\(last)") == .failure(.badCheckDigit))
    }

    @Test func adjacentTranspositionIsCaught() {
        #expect(VATNumber.parse("21345678903") == .failure(.badCheckDigit))
    }

    @Test(arguments: ["1234567890A", "12345 78903", "-1234567890", "１２３４５６７８９０３", "1234567890٣"])
    func nonDigits(raw: String) {
        #expect(VATNumber.parse(raw) == .failure(.notDigits))
    }

    @Test(arguments: ["", "1234567890", "123456789031", "IT12345678903", "1234 5678 903"])
    func wrongLength(raw: String) {
        #expect(VATNumber.parse(raw) == .failure(.wrongLength))
    }

    @Test func allZerosIsRejectedThoughItsCheckDigitFits() {
        #expect(VATNumber.checkDigit(for: "0000000000") == 0)
        #expect(VATNumber.parse("00000000000") == .failure(.allZeros))
    }

    @Test func surroundingWhitespaceIsTrimmed() throws {
        let number = try VATNumber.parse(" 12345678903\n").get()
        #expect(number.value == "12345678903")
    }

    @Test(arguments: ["", "123456789", "12345678901", "123456789A", "１２３４５６７８９０"])
    func checkDigitNeedsTenASCIIDigits(first10: String) {
        #expect(VATNumber.checkDigit(for: first10) == nil)
    }

    @Test func messages() {
        #expect(VATNumberError.wrongLength.message == "must be 11 digits")
        #expect(VATNumberError.badCheckDigit.message == "check digit does not match")
        let errors: [VATNumberError] = [.wrongLength, .notDigits, .allZeros, .badCheckDigit]
        #expect(Set(errors.map(\.message)).count == errors.count)
    }
}
