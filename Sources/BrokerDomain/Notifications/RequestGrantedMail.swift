import Foundation

/// To a company: a person granted its request, and what they granted (as the `single_request.accepted`
/// webhook says). The person is not named: the request is, by its id and link.
enum RequestGrantedMail {
    static func make(
        requestID: UUID, grant: ConsentGrant, to recipient: MailRecipient, publicURL: String, settingsURL: String
    ) -> OutgoingMail {
        let language = recipient.language
        let types = MailWords.types(grant.terms.types, language)
        let short = requestID.uuidString.lowercased().prefix(8)
        let footer = MailFooter.notification(recipient, settingsURL: settingsURL)
        let link = "\(publicURL)/company/requests/\(requestID.uuidString.lowercased())"
        let window = [grant.terms.windowFrom, grant.terms.windowTo].map { $0.map { MailDates.date($0, language, nil) } ?? "…" }
        switch language {
        case .en:
            let subscription = grant.terms.subscriptionDays.map { "Subscription: \($0) days" } ?? "Subscription: none"
            return OutgoingMail(
                to: recipient.email, subject: "Request granted: \(short)",
                body: """
                    Your request \(short) was granted\(grant.narrowed ? ", in part" : "").

                    Granted:
                    \(types)
                    Period: \(window[0]) – \(window[1])
                    \(subscription)

                    Download it through the API, or see it at
                    \(link)\(footer)
                    """)
        case .it:
            let subscription = grant.terms.subscriptionDays.map { "Abbonamento: \($0) giorni" } ?? "Abbonamento: nessuno"
            return OutgoingMail(
                to: recipient.email, subject: "Richiesta accolta: \(short)",
                body: """
                    La vostra richiesta \(short) è stata accolta\(grant.narrowed ? " in parte" : "").

                    Concesso:
                    \(types)
                    Periodo: \(window[0]) – \(window[1])
                    \(subscription)

                    Scaricateli tramite l'API, o vedeteli su
                    \(link)\(footer)
                    """)
        }
    }
}
