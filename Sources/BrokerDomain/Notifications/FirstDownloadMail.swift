import Foundation

/// To a person: a company downloaded data under their grant for the first time. It says which company
/// and when, never how much or what values: the person's access log shows what was released.
enum FirstDownloadMail {
    static func make(companyName: String, at time: Date, to recipient: MailRecipient, publicURL: String, settingsURL: String) -> OutgoingMail {
        let when = MailDates.dateTime(time, recipient.language, recipient.timeZone)
        let footer = MailFooter.notification(recipient, settingsURL: settingsURL)
        switch recipient.language {
        case .en:
            return OutgoingMail(
                to: recipient.email, subject: "\(companyName) downloaded the data you shared",
                body: """
                    \(companyName) downloaded data you shared with it for the first time, on \(when).

                    What was released, and when, is in your access log:
                    \(publicURL)/access-log

                    You can stop sharing at any time from your inbox:
                    \(publicURL)/inbox\(footer)
                    """)
        case .it:
            return OutgoingMail(
                to: recipient.email, subject: "\(companyName) ha scaricato i dati che hai condiviso",
                body: """
                    \(companyName) ha scaricato per la prima volta i dati che hai condiviso, il \(when).

                    Cosa è stato rilasciato, e quando, è nel tuo registro degli accessi:
                    \(publicURL)/access-log

                    Puoi smettere di condividere in qualsiasi momento dalla tua casella:
                    \(publicURL)/inbox\(footer)
                    """)
        }
    }
}
