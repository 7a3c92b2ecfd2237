import Foundation

/// To a person: a company asks for their data. What is asked, by whom, why, until when, and where to
/// answer; never a value of their data, and nothing the company could not already see.
enum NewRequestMail {
    struct Request: Sendable {
        var companyName: String
        var types: [RequestedType]
        var purpose: String
        var purposeCode: PurposeOfUse
        var subscriptionDays: Int?
        var expiresAt: Date
    }

    static func make(_ request: Request, to recipient: MailRecipient, publicURL: String, settingsURL: String) -> OutgoingMail {
        let language = recipient.language
        let types = MailWords.types(request.types, language)
        let purpose = MailWords.purpose(request.purposeCode, language)
        let expires = MailDates.dateTime(request.expiresAt, language, recipient.timeZone)
        let footer = MailFooter.notification(recipient, settingsURL: settingsURL)
        switch language {
        case .en:
            let ongoing = request.subscriptionDays.map { "\nIt asks for a subscription: new data for \($0) days after you accept.\n" } ?? ""
            return OutgoingMail(
                to: recipient.email, subject: "\(request.companyName) asks for your health data",
                body: """
                    \(request.companyName) sent you a request for your data on Data4Help.

                    It asks for:
                    \(types)
                    \(ongoing)
                    Purpose: \(purpose)
                    In their words: “\(request.purpose)”

                    Answer before \(expires), or the request expires. You can accept all of it, part of it, or refuse:
                    \(publicURL)/inbox

                    Nothing is shared until you accept.\(footer)
                    """)
        case .it:
            let ongoing =
                request.subscriptionDays.map { "\nChiede un abbonamento: i nuovi dati per \($0) giorni dopo che accetti.\n" } ?? ""
            return OutgoingMail(
                to: recipient.email, subject: "\(request.companyName) chiede i tuoi dati di salute",
                body: """
                    \(request.companyName) ti ha inviato una richiesta dei tuoi dati su Data4Help.

                    Chiede:
                    \(types)
                    \(ongoing)
                    Finalità: \(purpose)
                    Con le loro parole: “\(request.purpose)”

                    Rispondi entro il \(expires), altrimenti la richiesta scade. Puoi accettarla tutta, in parte, o rifiutarla:
                    \(publicURL)/inbox

                    Non viene condiviso nulla finché non accetti.\(footer)
                    """)
        }
    }
}
