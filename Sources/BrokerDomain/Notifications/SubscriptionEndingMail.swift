import Foundation

/// To a person: a subscription they granted ends within three days. Nothing to do unless they want it to
/// go on, in which case the company asks again.
enum SubscriptionEndingMail {
    static func make(companyName: String, endsAt: Date, to recipient: MailRecipient, publicURL: String, settingsURL: String) -> OutgoingMail {
        let ends = MailDates.dateTime(endsAt, recipient.language, recipient.timeZone)
        let footer = MailFooter.notification(recipient, settingsURL: settingsURL)
        switch recipient.language {
        case .en:
            return OutgoingMail(
                to: recipient.email, subject: "Your subscription with \(companyName) ends soon",
                body: """
                    The subscription you granted \(companyName) ends on \(ends). After that, it receives none of your new data.

                    You need not do anything. To see or end your subscriptions now:
                    \(publicURL)/inbox\(footer)
                    """)
        case .it:
            return OutgoingMail(
                to: recipient.email, subject: "Il tuo abbonamento con \(companyName) termina a breve",
                body: """
                    L'abbonamento che hai concesso a \(companyName) termina il \(ends). Da allora non riceverà più i tuoi nuovi dati.

                    Non devi fare nulla. Per vedere o chiudere subito i tuoi abbonamenti:
                    \(publicURL)/inbox\(footer)
                    """)
        }
    }
}
