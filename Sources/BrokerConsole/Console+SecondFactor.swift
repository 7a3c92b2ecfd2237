import BrokerDomain
import BrokerHTTP
import Foundation
import Hummingbird

/// The second factor in the console: the sign-in's second step, and enrolling, confirming and turning it
/// off. The same services as the API's `/v1/sessions/second-factor` and `/v1/me/second-factor`.
extension Console {
    /// Between the password and the code, the challenge rides in a cookie of its own (unreadable by scripts,
    /// never sent cross-site) for as long as it is valid.
    static let challengeCookie = "d4h_second_factor"
    static let secondFactorPage = "/account/second-factor"
    /// What an auditor without a second factor may open: enrolling, and signing out.
    static let enrolmentPaths: Set<String> = [
        secondFactorPage, secondFactorPage + "/enrol", secondFactorPage + "/confirm", "/logout",
    ]

    /// A session from either step of the sign-in: its cookie, and the role's home.
    func signedIn(_ request: ConsoleRequest, _ session: AccountService.NewSession) -> Response {
        var response = request.redirect(Self.home(of: session.role), notice: "signed-in")
        response.setCookie(cookie(Self.sessionCookie, session.token.text, maxAge: sessionTTL))
        response.setCookie(cookie(Self.challengeCookie, "", maxAge: 0))
        return response
    }

    /// The password was right and the account has a second factor: on to the code.
    func askForSecondFactor(_ request: ConsoleRequest, _ challenge: SecondFactorChallenge) -> Response {
        var response = request.redirect("/login/second-factor")
        response.setCookie(cookie(Self.challengeCookie, challenge.token.text, maxAge: AccountService.secondFactorChallengeTTL))
        return response
    }

    func registerSecondFactorPages(on router: Router<BrokerRequestContext>) {
        get("/login/second-factor", .anyone, on: router) { request in
            guard request.request.cookies[Self.challengeCookie]?.value.isEmpty == false else { return .redirect(to: "/login", type: .normal) }
            return request.page("second-factor-login", title: request.t("title.enter-your-code"))
        }
        post("/login/second-factor", .anyone, on: router) { request in
            try await request.submitting(
                "second-factor-login", title: request.t("title.enter-your-code"), fieldNames: ConsoleRequest.sameNames("code", "recoveryCode")
            ) {
                let challenge = request.request.cookies[Self.challengeCookie]?.value ?? ""
                let proof = try SecondFactorCode.from(code: request.form["code"], recoveryCode: request.form["recoveryCode"])
                let session = try await request.services.accounts.completeLogIn(
                    challenge: challenge, proof, clientAddress: request.clientAddress, logger: request.logger)
                return signedIn(request, session)
            }
        }

        get("/account/second-factor", .signedIn, on: router) { request in
            request.page("second-factor", title: request.t("title.second-factor"), values: try await Self.secondFactorValues(request))
        }
        post("/account/second-factor/enrol", .signedIn, on: router) { request in
            _ = try await request.services.accounts.startSecondFactorEnrolment(try request.caller, logger: request.logger)
            return request.redirect(Self.secondFactorPage + "/confirm")
        }
        get("/account/second-factor/confirm", .signedIn, on: router) { request in
            request.page("second-factor-enrol", title: request.t("title.set-up-your-second-factor"), values: try await Self.enrolmentValues(request))
        }
        post("/account/second-factor/confirm", .signedIn, on: router) { request in
            let values = try await Self.enrolmentValues(request)
            return try await request.submitting(
                "second-factor-enrol", title: request.t("title.set-up-your-second-factor"), values: values,
                fieldNames: ConsoleRequest.sameNames("code", "currentCode")
            ) {
                let currentCode = request.form["currentCode"]
                let codes = try await request.services.accounts.confirmSecondFactor(
                    try request.caller, code: request.form["code"] ?? "",
                    current: currentCode.map { $0.count == TOTP.digits ? .totp($0) : .recovery($0) },
                    clientAddress: request.clientAddress, logger: request.logger)
                // Shown once, on this page; the server keeps only their hashes. The caller is enrolled now.
                var enrolled = request
                enrolled.principal?.mustEnrolSecondFactor = false
                return enrolled.page(
                    "second-factor-recovery-codes", title: enrolled.t("title.your-recovery-codes"), values: ["recoveryCodes": codes.map(\.text)])
            }
        }
        post("/account/second-factor/disable", .signedIn, on: router) { request in
            let values = try await Self.secondFactorValues(request)
            return try await request.submitting(
                "second-factor", title: request.t("title.second-factor"), values: values, fieldNames: ConsoleRequest.sameNames("code", "recoveryCode")
            ) {
                let proof = try SecondFactorCode.from(code: request.form["code"], recoveryCode: request.form["recoveryCode"])
                try await request.services.accounts.disableSecondFactor(
                    try request.caller, proof, clientAddress: request.clientAddress, logger: request.logger)
                return request.redirect(Self.secondFactorPage, notice: "second-factor-disabled")
            }
        }
    }

    static func secondFactorValues(_ request: ConsoleRequest) async throws -> [String: Any] {
        let status = try await request.services.accounts.secondFactorStatus(of: try request.caller, logger: request.logger)
        return [
            "enabled": status.enabled, "enabledAt": Wording.time(status.enabledAt), "required": status.required,
            "unusedRecoveryCodes": String(status.unusedRecoveryCodes), "pendingEnrolment": status.pendingEnrolment,
        ]
    }

    /// The pending enrolment's key and QR code, and whether it replaces a factor (then a current code is asked).
    static func enrolmentValues(_ request: ConsoleRequest) async throws -> [String: Any] {
        let caller = try request.caller
        guard let enrolment = try await request.services.accounts.pendingSecondFactorEnrolment(of: caller, logger: request.logger) else {
            throw SecondFactorError.noPendingEnrolment
        }
        let status = try await request.services.accounts.secondFactorStatus(of: caller, logger: request.logger)
        return ["secret": enrolment.secret, "uri": enrolment.uri, "qrCodeSVG": enrolment.qrCodeSVG, "replacing": status.enabled]
    }
}
