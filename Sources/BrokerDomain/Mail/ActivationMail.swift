import Foundation

/// The mail that carries an activation token (the contract fixes its `Activation token:` line and link).
enum ActivationMail {
    /// `asksForPassword`: the registration replaced an earlier one of the same address, and its activation
    /// asks for the password it was registered with (pre-hijacking, issue 27).
    static func make(to email: String, role: Role, token: SecretToken, asksForPassword: Bool = false, publicURL: String) -> OutgoingMail {
        let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        let link = "\(base)/activate?token=\(token.text)"
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
        let body = """
            \(opening)\(registeredAgain)

            Open this link within 24 hours:
            \(link)

            Activation token: \(token.text)

            If you did not ask for this, ignore this mail: the account stays inactive.
            """
        return OutgoingMail(to: email, subject: "Activate your Data4Help account", body: body)
    }
}
