import Foundation

/// The mail that carries an activation token (the contract fixes its `Activation token:` line and link).
enum ActivationMail {
    static func make(to email: String, role: Role, token: SecretToken, publicURL: String) -> OutgoingMail {
        let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        let link = "\(base)/activate?token=\(token.text)"
        let opening =
            switch role {
            case .user: "Welcome to Data4Help. Activate your account to start sharing your health data on your terms."
            case .thirdParty: "Welcome to Data4Help. Activate your company account to start sending data requests."
            case .auditor: "You have been added as an auditor of Data4Help. Activate your account and choose a password."
            }
        let body = """
            \(opening)

            Open this link within 24 hours:
            \(link)

            Activation token: \(token.text)

            If you did not ask for this, ignore this mail: the account stays inactive.
            """
        return OutgoingMail(to: email, subject: "Activate your Data4Help account", body: body)
    }
}
