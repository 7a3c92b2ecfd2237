import Foundation

/// What runners are told by mail.
enum RunMail {
    static func cancelled(_ run: Run, to recipient: MailRecipient, settingsURL: String) -> OutgoingMail {
        let start = MailDates.dateTime(run.startsAt, recipient.language, recipient.timeZone)
        let footer = MailFooter.notification(recipient, settingsURL: settingsURL)
        switch recipient.language {
        case .en:
            return OutgoingMail(
                to: recipient.email, subject: "Run cancelled: \(run.name)",
                body: """
                    \(run.organiserName) cancelled the run "\(run.name)" that was to start on \(start).

                    The run's request for your position has been withdrawn: nothing more of yours is shared for it.\(footer)
                    """)
        case .it:
            return OutgoingMail(
                to: recipient.email, subject: "Corsa annullata: \(run.name)",
                body: """
                    \(run.organiserName) ha annullato la corsa "\(run.name)" che doveva partire il \(start).

                    La richiesta della tua posizione per la corsa è stata ritirata: non viene più condiviso nulla di tuo per essa.\(footer)
                    """)
        }
    }
}
