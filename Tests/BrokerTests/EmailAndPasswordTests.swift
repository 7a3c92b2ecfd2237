import BrokerTestSupport
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

private let longestLocalPart = String(repeating: "a", count: 64)
/// 63 + 1 + 63 + 1 + 61 = 189 characters, so that 64 + "@" + this is exactly 254.
private let longestDomain =
    String(repeating: "b", count: 63) + "." + String(repeating: "c", count: 63) + "."
    + String(repeating: "d", count: 61)

@Suite struct EmailAddressTests {
    @Test(arguments: [
        ("anna@example.com", "anna@example.com"),
        ("Anna.Rossi@Example.COM", "anna.rossi@example.com"),
        ("  bob@mail.example.it \n", "bob@mail.example.it"),
        ("first.last+tag@sub-domain.example.org", "first.last+tag@sub-domain.example.org"),
        ("o'brien_{x}@example.ie", "o'brien_{x}@example.ie"),
        ("x@a.b", "x@a.b"),
        ("user@xn--bcher-kva.example", "user@xn--bcher-kva.example"),
        ("user@123.example.com", "user@123.example.com"),
        ("\(longestLocalPart)@example.com", "\(longestLocalPart)@example.com"),
        ("\(longestLocalPart)@\(longestDomain)", "\(longestLocalPart)@\(longestDomain)"),
    ])
    func validAddressesAreLowercased(raw: String, expected: String) throws {
        let address = try EmailAddress.parse(raw).get()
        #expect(address.value == expected)
    }

    @Test func caseDoesNotMakeADifferentAddress() throws {
        let mixed = try EmailAddress.parse("Anna@Example.com").get()
        let lower = try EmailAddress.parse("anna@example.com").get()
        #expect(mixed == lower)
    }

    @Test(arguments: [
        ("", EmailAddressError.empty),
        ("   ", .empty),
        ("anna example.com", .forbiddenCharacter),
        ("anna@exa mple.com", .forbiddenCharacter),
        ("anna@example.com\r\nBcc: eve@example.com", .forbiddenCharacter),
        ("anna\u{0}@example.com", .forbiddenCharacter),
        ("anna\u{200B}@example.com", .forbiddenCharacter),
        ("anna\u{2028}@example.com", .forbiddenCharacter),
        ("\(longestLocalPart)@\(longestDomain)d", .tooLong),
        ("anna.example.com", .notOneAtSign),
        ("a@b@example.com", .notOneAtSign),
        ("@example.com", .emptyLocalPart),
        ("\(longestLocalPart)a@example.com", .localPartTooLong),
        (".anna@example.com", .badLocalPart),
        ("anna.@example.com", .badLocalPart),
        ("an..na@example.com", .badLocalPart),
        ("\"anna\"@example.com", .badLocalPart),
        ("anna(x)@example.com", .badLocalPart),
        ("annà@example.com", .badLocalPart),
        ("anna@", .badDomain),
        ("anna@localhost", .badDomain),
        ("anna@-example.com", .badDomain),
        ("anna@example-.com", .badDomain),
        ("anna@example..com", .badDomain),
        ("anna@.example.com", .badDomain),
        ("anna@example.com.", .badDomain),
        ("anna@exa_mple.com", .badDomain),
        ("anna@bücher.de", .badDomain),
        ("anna@[127.0.0.1]", .badDomain),
        ("anna@\(String(repeating: "e", count: 64)).com", .badDomain),
    ])
    func invalidAddresses(raw: String, expected: EmailAddressError) {
        #expect(EmailAddress.parse(raw) == .failure(expected))
    }

    @Test func messagesAreDistinct() {
        let errors: [EmailAddressError] = [
            .empty, .forbiddenCharacter, .tooLong, .notOneAtSign, .emptyLocalPart, .localPartTooLong, .badLocalPart,
            .badDomain,
        ]
        #expect(Set(errors.map(\.message)).count == errors.count)
        #expect(EmailAddressError.tooLong.message.contains("254"))
    }
}

@Suite struct PasswordPolicyTests {
    private let email = "anna.rossi@example.com"

    @Test(arguments: [
        "abcdefghij",
        "correct horse battery staple",
        String(repeating: "x", count: 128),
        String(repeating: "🔒", count: 10),
        String(repeating: "e\u{301}", count: 128),
        "anna.rossi@example.com!",
    ])
    func acceptable(password: String) {
        #expect(PasswordPolicy.violation(password: password, email: email) == nil)
    }

    /// Nine emoji are 36 bytes: a byte count would wrongly let them through.
    @Test(arguments: ["", "short", "abcdefghi", String(repeating: "🔒", count: 9), String(repeating: "e\u{301}", count: 9)])
    func tooShort(password: String) {
        #expect(PasswordPolicy.violation(password: password, email: email) == .tooShort)
    }

    @Test(arguments: [String(repeating: "x", count: 129), String(repeating: "e\u{301}", count: 129)])
    func tooLong(password: String) {
        #expect(PasswordPolicy.violation(password: password, email: email) == .tooLong)
    }

    @Test(arguments: [
        ("anna.rossi@example.com", "anna.rossi@example.com"),
        ("ANNA.ROSSI@EXAMPLE.COM", "anna.rossi@example.com"),
        ("anna.rossi@example.com", " Anna.Rossi@Example.com "),
    ])
    func sameAsEmail(password: String, email: String) {
        #expect(PasswordPolicy.violation(password: password, email: email) == .sameAsEmail)
    }

    @Test func messages() {
        #expect(PasswordPolicyViolation.tooShort.message == "must be at least 10 characters")
        #expect(PasswordPolicyViolation.tooLong.message == "must be at most 128 characters")
        #expect(PasswordPolicyViolation.sameAsEmail.message == "must not be the same as the email address")
    }
}
