import Foundation

/// To a person, weekly: how many group requests their data contributed to, and whose. Group results are
/// differentially private aggregates over many people: the mail says so, and says nothing of any value.
enum WeeklyDigestMail {
    static func make(
        requests: Int, companies: [String], weekStart: Date, weekEnd: Date, to recipient: MailRecipient, publicURL: String,
        settingsURL: String
    ) -> OutgoingMail {
        let language = recipient.language
        let from = MailDates.date(weekStart, language, nil)
        let to = MailDates.date(weekEnd, language, nil)
        let names = companies.sorted().map { "  • \($0)" }.joined(separator: "\n")
        let count = MailDates.number(requests, language)
        let footer = MailFooter.notification(recipient, settingsURL: settingsURL)
        switch language {
        case .en:
            let what = requests == 1 ? "1 group request" : "\(count) group requests"
            return OutgoingMail(
                to: recipient.email, subject: "Your week on Data4Help: your data helped \(what)",
                body: """
                    From \(from) to \(to), your data contributed to \(what), from:
                    \(names)

                    Group requests are answered only with statistics over many people, with noise added so that no one
                    person can be picked out: no company received your own data through them.

                    Who saw what, and when:
                    \(publicURL)/access-log\(footer)
                    """)
        case .it:
            let what = requests == 1 ? "1 richiesta di gruppo" : "\(count) richieste di gruppo"
            return OutgoingMail(
                to: recipient.email, subject: "La tua settimana su Data4Help: i tuoi dati hanno aiutato \(what)",
                body: """
                    Dal \(from) al \(to), i tuoi dati hanno contribuito a \(what), da parte di:
                    \(names)

                    Alle richieste di gruppo si risponde solo con statistiche su molte persone, con del rumore aggiunto
                    perché nessuno possa essere riconosciuto: nessuna azienda ha ricevuto i tuoi dati personali in questo modo.

                    Chi ha visto cosa, e quando:
                    \(publicURL)/access-log\(footer)
                    """)
        }
    }
}
