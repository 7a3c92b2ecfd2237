import Foundation

/// The closing lines of a notification: why it came, and the link that turns its kind off.
enum MailFooter {
    static func notification(_ recipient: MailRecipient, settingsURL: String) -> String {
        switch recipient.language {
        case .en:
            """


            --
            You receive this mail because these notifications are on for your Data4Help account.
            Turn them off with one click: \(recipient.unsubscribeURL)
            or choose which mails you receive: \(settingsURL)
            """
        case .it:
            """


            --
            Ricevi questa email perché queste notifiche sono attive per il tuo account Data4Help.
            Disattivale con un clic: \(recipient.unsubscribeURL)
            oppure scegli quali email ricevere: \(settingsURL)
            """
        }
    }
}
