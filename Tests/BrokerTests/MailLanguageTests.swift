import Foundation
import Testing

@testable import BrokerDomain

/// Every mail, rendered in both languages: each language's text is its own (no English sentence left in
/// the Italian, no empty part), and what tests and people read from a mail (the token lines, the links)
/// is in both.
@Suite("Mail languages")
struct MailLanguageTests {
    static func recipient(_ language: Language) -> MailRecipient {
        MailRecipient(
            email: "laura@example.com", language: language, timeZone: TimeZone(identifier: "Europe/Rome"),
            unsubscribeURL: "http://127.0.0.1:8080/unsubscribe/TOKEN")
    }
    static let url = "http://127.0.0.1:8080"
    static let when = Date(timeIntervalSince1970: 1_795_000_000)

    /// Every mail the service writes, in `language`.
    static func everyMail(_ language: Language) -> [(name: String, mail: OutgoingMail)] {
        let r = recipient(language)
        let token = SecretToken.generate(.activation)
        let key = APIKeyStore.Key(
            id: UUID(), name: "ci", prefix: "d4hk_abcd", scope: .readOnly, createdAt: when, expiresAt: nil, lastUsedAt: nil)
        let grant = ConsentGrant(
            id: UUID(), terms: ConsentTerms(types: [.sample(.heartRate)], windowFrom: nil, windowTo: when, subscriptionDays: 30),
            grantedAt: when, narrowed: true)
        let request = NewRequestMail.Request(
            companyName: "Cardio S.p.A.", types: [.sample(.heartRate), .position], purpose: "Study", purposeCode: .healthcareResearch,
            subscriptionDays: 30, expiresAt: when)
        return [
            ("activation", ActivationMail.make(to: r.email, role: .user, token: token, language: language, publicURL: url)),
            (
                "activation again",
                ActivationMail.make(to: r.email, role: .auditor, token: token, asksForPassword: true, language: language, publicURL: url)
            ),
            ("registration attempt", RegistrationAttemptMail.make(to: r.email, held: .fiscalCode, language: language, publicURL: url)),
            ("API key", APIKeyCreatedMail.make(to: r.email, key: key, language: language, publicURL: url)),
            ("password reset", PasswordResetMail.make(to: r.email, token: SecretToken.generate(.passwordReset), language: language, publicURL: url)),
            ("password changed", PasswordChangedMail.make(to: r.email, language: language, publicURL: url)),
            ("new request", NewRequestMail.make(request, to: r, publicURL: url, settingsURL: url + "/account/notifications")),
            ("subscription ending", SubscriptionEndingMail.make(companyName: "Cardio S.p.A.", endsAt: when, to: r, publicURL: url, settingsURL: url)),
            ("first download", FirstDownloadMail.make(companyName: "Cardio S.p.A.", at: when, to: r, publicURL: url, settingsURL: url)),
            (
                "weekly digest",
                WeeklyDigestMail.make(
                    requests: 12345, companies: ["A", "B"], weekStart: when, weekEnd: when.addingTimeInterval(6 * 86_400), to: r,
                    publicURL: url, settingsURL: url)
            ),
            ("request granted", RequestGrantedMail.make(requestID: UUID(), grant: grant, to: r, publicURL: url, settingsURL: url)),
            ("request expired", RequestExpiredMail.make(requestID: UUID(), to: r, publicURL: url, settingsURL: url)),
        ]
    }

    /// Words only an English sentence has; none may be left in an Italian mail.
    static let englishWords = [" the ", " your ", " you ", " was ", " is ", " and ", " to ", " of "]

    @Test("every mail has an Italian of its own: a different subject and body, and no English sentence in it")
    func italianIsItalian() {
        let english = Self.everyMail(.en)
        let italian = Self.everyMail(.it)
        #expect(english.count == italian.count)
        for (en, it) in zip(english, italian) {
            #expect(en.mail.subject != it.mail.subject, "\(en.name): the subject is not translated")
            #expect(!it.mail.body.isEmpty && !it.mail.subject.isEmpty)
            // The contract's machine-readable lines ("Activation token: …") stay as they are in both.
            let prose = it.mail.body.split(separator: "\n").filter { !$0.contains("token: ") }.joined(separator: "\n").lowercased()
            for word in Self.englishWords {
                #expect(!(" " + prose.replacingOccurrences(of: "\n", with: " ") + " ").contains(word), "\(it.name): “\(word)” in the Italian")
            }
        }
    }

    @Test("dates and numbers follow the language; a person's times are in their zone")
    func formats() {
        let italian = Self.everyMail(.it).first { $0.name == "weekly digest" }!.mail.body
        let english = Self.everyMail(.en).first { $0.name == "weekly digest" }!.mail.body
        #expect(italian.contains("12.345") && english.contains("12,345"))
        #expect(italian.contains("novembre") || italian.contains("dicembre") || italian.contains("ottobre"))
        let request = Self.everyMail(.it).first { $0.name == "new request" }!.mail.body
        #expect(!request.contains("UTC"), "a person's time is written in their own zone")
    }

    @Test("notifications carry the unsubscribe link in both languages; security mails none")
    func footers() {
        for language in Language.allCases {
            for (name, mail) in Self.everyMail(language) {
                let isNotification = ["new request", "subscription ending", "first download", "weekly digest", "request granted", "request expired"]
                    .contains(name)
                #expect(mail.body.contains("/unsubscribe/TOKEN") == isNotification, "\(name) in \(language)")
            }
        }
    }
}
