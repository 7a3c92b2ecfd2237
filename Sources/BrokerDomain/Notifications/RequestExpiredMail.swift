import Foundation

/// To a company: a request it was shown as pending expired. Sent alike whether the person never answered,
/// never existed or refused (as the `single_request.expired` webhook), so it tells nothing the status did not.
enum RequestExpiredMail {
    static func make(requestID: UUID, to recipient: MailRecipient, publicURL: String, settingsURL: String) -> OutgoingMail {
        let short = requestID.uuidString.lowercased().prefix(8)
        let footer = MailFooter.notification(recipient, settingsURL: settingsURL)
        let link = "\(publicURL)/company/requests/\(requestID.uuidString.lowercased())"
        switch recipient.language {
        case .en:
            return OutgoingMail(
                to: recipient.email, subject: "Request expired: \(short)",
                body: """
                    Your request \(short) expired without being granted. Nothing was shared.

                    You may send a new request:
                    \(link)\(footer)
                    """)
        case .it:
            return OutgoingMail(
                to: recipient.email, subject: "Richiesta scaduta: \(short)",
                body: """
                    La vostra richiesta \(short) è scaduta senza essere accolta. Non è stato condiviso nulla.

                    Potete inviare una nuova richiesta:
                    \(link)\(footer)
                    """)
        }
    }
}
