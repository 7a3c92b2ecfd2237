import Foundation

/// The mail that carries an activation token (the contract fixes its `Activation token:` line and link,
/// in both languages).
enum ActivationMail {
    /// `asksForPassword`: the registration replaced an earlier one of the same address, and its activation
    /// asks for the password it was registered with (pre-hijacking, issue 27).
    static func make(
        to email: String, role: Role, token: SecretToken, asksForPassword: Bool = false, language: Language, publicURL: String
    ) -> OutgoingMail {
        let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        let link = "\(base)/activate?token=\(token.text)"
        switch language {
        case .en:
            let opening =
                switch role {
                case .user: "Welcome to Data4Help. Activate your account to start sharing your health data on your terms."
                case .thirdParty: "Welcome to Data4Help. Activate your company account to start sending data requests."
                case .auditor: "You have been added as an auditor of Data4Help. Activate your account and choose a password."
                }
            let registeredAgain =
                asksForPassword
                ? """


                This address was registered more than once before it was activated. Only the newest registration
                can be activated, and the links of earlier mails no longer work. This link asks for the password
                that registration was made with: if you do not know it, someone else registered last, so do not
                use it, and register again yourself.
                """
                : ""
            return OutgoingMail(
                to: email, subject: "Activate your Data4Help account",
                body: """
                    \(opening)\(registeredAgain)

                    Open this link within 24 hours:
                    \(link)

                    Activation token: \(token.text)

                    If you did not ask for this, ignore this mail: the account stays inactive.
                    """)
        case .it:
            let opening =
                switch role {
                case .user: "Benvenuto in Data4Help. Attiva il tuo account per iniziare a condividere i tuoi dati di salute alle tue condizioni."
                case .thirdParty: "Benvenuti in Data4Help. Attivate l'account aziendale per iniziare a inviare richieste di dati."
                case .auditor: "Sei stato aggiunto come revisore di Data4Help. Attiva il tuo account e scegli una password."
                }
            let registeredAgain =
                asksForPassword
                ? """


                Questo indirizzo è stato registrato più di una volta prima dell'attivazione. Si può attivare solo la
                registrazione più recente, e i link delle email precedenti non funzionano più. Questo link chiede la
                password usata per quella registrazione: se non la conosci, l'ultima registrazione l'ha fatta
                qualcun altro; non usarlo e registrati di nuovo tu.
                """
                : ""
            return OutgoingMail(
                to: email, subject: "Attiva il tuo account Data4Help",
                body: """
                    \(opening)\(registeredAgain)

                    Apri questo link entro 24 ore:
                    \(link)

                    Activation token: \(token.text)
                    (il codice di attivazione, da incollare se il link non si apre)

                    Se non l'hai chiesto tu, ignora questa email: l'account resta inattivo.
                    """)
        }
    }
}
