import BrokerDomain
import BrokerTestSupport
import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import Testing

/// The mails people and companies get about requests, through the real server and its outbox: what they
/// say (never a value of anyone's data), in the recipient's language, each kind turned off by its
/// one-click link and by nothing else.
@Suite("Notification mails")
struct NotificationMailTests {
    /// The mails to `email` (headers and body, CRLF turned to LF).
    private func mails(_ harness: TestHarness, to email: String) async throws -> [String] {
        try await harness.mails().filter { $0.contains("To: <\(email.lowercased())>") }.map { $0.replacingOccurrences(of: "\r\n", with: "\n") }
    }

    /// Waits (bounded) until `email` has a mail whose text contains `text`.
    private func waitForMail(_ harness: TestHarness, to email: String, containing text: String) async throws -> String? {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            if let mail = try await mails(harness, to: email).last(where: { $0.contains(text) }) { return mail }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    private func email(of accountID: String, _ harness: TestHarness) async throws -> String {
        try #require(try await harness.sql("SELECT email FROM accounts WHERE id = '\(accountID)'").first?.decode(String.self))
    }

    private func unsubscribeURL(in mail: String) -> String? {
        mail.split(separator: "\n").first { $0.hasPrefix("List-Unsubscribe: <") }
            .map { String($0.dropFirst("List-Unsubscribe: <".count).dropLast()) }
    }

    @Test("a new request is mailed to its person: who, what in plain words, why, until when; no value of their data")
    func newRequestMail() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties(companyName: "Cardio Research S.p.A.")
            try await harness.uploadHeartRates([TestHarness.time(minutes: 1)], token: parties.person, firstValue: 187)
            _ = try await harness.sentRequestID(parties, types: ["heart_rate", "step_count"], subscriptionDays: 30)
            let mail = try #require(try await waitForMail(harness, to: parties.personEmail, containing: "asks for your health data"))
            #expect(mail.contains("Cardio Research S.p.A."))
            #expect(mail.contains("Heart rate") && mail.contains("Steps"))
            #expect(mail.contains("For health research"))
            #expect(mail.contains("http://127.0.0.1:8080/inbox"))
            #expect(mail.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click"))
            #expect(unsubscribeURL(in: mail)?.hasPrefix("http://127.0.0.1:8080/unsubscribe/") == true)
            // As a number of its own: ids, tokens and addresses in the mail are random hex, which can hold "187".
            let words = mail.split { !$0.isLetter && !$0.isNumber }
            #expect(!words.contains("187"), "no value of the person's data")
            #expect(!mail.contains(parties.personFiscalCode))
        }
    }

    @Test("a request to an unknown address mails nobody, and its person once they activate an account with it")
    func requestToNobodyThenRegistered() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            var stranger = TestHarness.Person()
            stranger.fiscalCode = TestHarness.uniqueFiscalCode()
            let waiting = RequestParties(
                company: parties.company, companyID: parties.companyID, person: "", personID: "", personEmail: stranger.email,
                personFiscalCode: stranger.fiscalCode)
            let sent = try await harness.sendRequest(waiting)
            #expect(sent.status == .created)
            try await Task.sleep(for: .milliseconds(600))
            #expect(try await mails(harness, to: stranger.email).isEmpty, "no account, no mail")
            _ = try await harness.activeUser(stranger)
            #expect(try await waitForMail(harness, to: stranger.email, containing: "asks for your health data") != nil)
        }
    }

    @Test("a person's language: the request's mail in Italian")
    func italianMail() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties(companyName: "Ricerca Cuore S.r.l.")
            let changed = try await harness.request(.patch, "/v1/me", json: #"{"language":"it"}"#, token: parties.person)
            try #require(changed.status == .ok, "\(harness.text(changed))")
            _ = try await harness.sentRequestID(parties)
            let mail = try #require(try await waitForMail(harness, to: parties.personEmail, containing: "chiede i tuoi dati di salute"))
            #expect(mail.contains("Frequenza cardiaca") && mail.contains("Per la ricerca sanitaria"))
            #expect(mail.contains("Disattivale con un clic"))
        }
    }

    @Test("turned off in the settings, or by the mail's one-click link: no more mails of that kind; a GET changes nothing")
    func optOuts() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let id = try await harness.sentRequestID(parties)
            let mail = try #require(try await waitForMail(harness, to: parties.personEmail, containing: "asks for your health data"))
            let link = try #require(unsubscribeURL(in: mail))
            let path = String(link.dropFirst("http://127.0.0.1:8080".count))
            // A mail scanner opening the link unsubscribes nobody.
            let shown = try await harness.request(.get, path)
            #expect(shown.status == .ok)
            #expect(try await harness.int("SELECT count(*) FROM mail_opt_outs") == 0)
            // An altered token (another account's id under this MAC) is refused and changes nothing.
            let token = String(path.dropFirst("/unsubscribe/".count))
            let parts = token.split(separator: ".").map(String.init)
            let forged = "/unsubscribe/\(UUID().uuidString.lowercased()).\(parts[1]).\(parts[2])"
            #expect(
                try await harness.request(
                    .post, forged, json: "List-Unsubscribe=One-Click", headers: [.contentType: "application/x-www-form-urlencoded"]
                ).status == .notFound)
            let otherKind = "/unsubscribe/\(parts[0]).weekly_digest.\(parts[2])"
            #expect(
                try await harness.request(
                    .post, otherKind, json: "List-Unsubscribe=One-Click", headers: [.contentType: "application/x-www-form-urlencoded"]
                ).status == .notFound)
            #expect(try await harness.int("SELECT count(*) FROM mail_opt_outs") == 0)
            // RFC 8058's POST, with no cookie and no CSRF token, as a mail client sends it.
            let done = try await harness.request(
                .post, path, json: "List-Unsubscribe=One-Click", headers: [.contentType: "application/x-www-form-urlencoded"])
            #expect(done.status == .ok)
            #expect(
                try await harness.int("SELECT count(*) FROM mail_opt_outs WHERE kind = 'new_request' AND account_id = '\(parties.personID)'") == 1)
            let settings = try await harness.request(.get, "/v1/me/notifications", token: parties.person)
            #expect(harness.text(settings).contains(#"{"enabled":false,"kind":"new_request"}"#))
            // The next request reaches the inbox but no mail is written.
            _ = try await harness.request(.post, "/v1/single-requests/\(id)/cancel", token: parties.company)
            let second = try await harness.sendRequest(parties)
            #expect(second.status == .created)
            try await Task.sleep(for: .milliseconds(800))
            #expect(try await mails(harness, to: parties.personEmail).filter { $0.contains("asks for your health data") }.count == 1)
            // A kind this role never receives is refused by name.
            let wrong = try await harness.request(
                .put, "/v1/me/notifications", json: #"{"notifications":[{"kind":"request_granted","enabled":false}]}"#, token: parties.person)
            #expect(wrong.status == .unprocessableContent)
            #expect(harness.text(wrong).contains("notifications[0].kind"))
        }
    }

    @Test("the company hears of a grant (what was granted); the person of the first download only")
    func grantAndFirstDownload() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties(companyName: "Cardio Research S.p.A.")
            // Values no header, id or token of a mail can hold by chance (60 could: a Message-ID once did).
            try await harness.uploadHeartRates(
                [TestHarness.time(minutes: 1), TestHarness.time(minutes: 2)], token: parties.person, firstValue: 61.375)
            let id = try await harness.acceptedRequestID(parties, types: ["heart_rate"])
            let companyEmail = try await email(of: parties.companyID, harness)
            let granted = try #require(try await waitForMail(harness, to: companyEmail, containing: "Request granted"))
            #expect(granted.contains("Heart rate") && granted.contains("/company/requests/\(id)"))
            #expect(!granted.contains(parties.personFiscalCode) && !granted.contains(parties.personEmail), "the person is not named in a mail")
            _ = try await harness.download(id, token: parties.company)
            _ = try await harness.download(id, token: parties.company)
            #expect(try await waitForMail(harness, to: parties.personEmail, containing: "downloaded the data you shared") != nil)
            try await Task.sleep(for: .milliseconds(500))
            let downloads = try await mails(harness, to: parties.personEmail).filter { $0.contains("downloaded the data you shared") }
            #expect(downloads.count == 1, "only the first download under a grant is mailed")
            #expect(
                downloads.first.map { !$0.contains("61.375") && !$0.contains("62.375") && !$0.contains("rows") } == true, "no count, no value")
        }
    }

    @Test("the weekly digest: one mail per contributing person, written in batches, none twice, none to who turned it off")
    func weeklyDigest() async throws {
        try await TestHarness.run { harness in
            var people: [RequestParties] = []
            for _ in 0..<3 { people.append(try await harness.requestParties(companyName: "Population Study S.p.A.")) }
            // Contributions in the week of Monday 2026-11-02, and one outside it.
            for party in people {
                _ = try await harness.sql(
                    """
                    INSERT INTO access_log (user_id, at, third_party_id, company_name, request_id, kind, types)
                    VALUES ('\(party.personID)', '2026-11-04T10:00:00Z', '\(party.companyID)', 'Population Study S.p.A.', gen_random_uuid(), 'group', '{1}'),
                           ('\(party.personID)', '2026-11-05T10:00:00Z', '\(party.companyID)', 'Population Study S.p.A.', gen_random_uuid(), 'group', '{1}')
                    """)
            }
            _ = try await harness.sql("INSERT INTO mail_opt_outs (account_id, kind) VALUES ('\(people[2].personID)', 'weekly_digest')")
            // The following Monday, after the sending hour.
            let monday = try #require(ISO8601DateFormatter().date(from: "2026-11-09T08:00:00Z"))
            #expect(WeeklyDigest.dueWeek(at: monday).description == "2026-11-02")
            #expect(WeeklyDigest.dueWeek(at: monday.addingTimeInterval(-2 * 3600)).description == "2026-10-26", "before 07:00: the week before")
            try await TestDatabase.withClient(harness.databaseURL) { client in
                let digest = WeeklyDigest(
                    client: client, outbox: MailOutbox(client: client, publicURL: "http://127.0.0.1:8080"), clock: .fixed(monday))
                let logger = Logger(label: "digest-test")
                var batches = 0
                while try await digest.writeBatch(limit: 1, logger: logger) > 0 { batches += 1 }
                #expect(batches == 3, "one person per batch, then the week is done")
                #expect(try await digest.writeBatch(limit: 1, logger: logger) == 0)
            }
            #expect(try await harness.int("SELECT count(*) FROM mail_outbox WHERE kind = 'weekly_digest'") == 2)
            let mail = try #require(try await waitForMail(harness, to: people[0].personEmail, containing: "your data helped 2 group requests"))
            #expect(mail.contains("Population Study S.p.A."))
            #expect(try await mails(harness, to: people[2].personEmail).allSatisfy { !$0.contains("group requests") })
        }
    }

    @Test("attack: a company name with a line break cannot add a header (a Bcc sendmail would obey) to a person's mail")
    func headerInjection() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let renamed = try await harness.request(
                .patch, "/v1/me", json: #"{"companyName":"Acme\nBcc: spy@acme.example"}"#, token: parties.company)
            #expect(renamed.status == .unprocessableContent, "a name on two lines is refused")
            // A name that got in before (or by any other path) is written on one line all the same.
            _ = try await harness.sql(
                "UPDATE third_parties SET company_name = E'Acme\\nBcc: spy@acme.example' WHERE account_id = '\(parties.companyID)'")
            _ = try await harness.sentRequestID(parties)
            let mail = try #require(try await waitForMail(harness, to: parties.personEmail, containing: "asks for your health data"))
            let headers = mail.components(separatedBy: "\n\n").first ?? ""
            #expect(!headers.split(separator: "\n").contains { $0.hasPrefix("Bcc:") }, "\(headers)")
            #expect(headers.contains("Subject: Acme Bcc: spy@acme.example asks for your health data"))
        }
    }
}
