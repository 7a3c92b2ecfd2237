import BrokerDomain
import BrokerHTTP
import Foundation
import Hummingbird

/// "Forgot your password?": asking for a reset mail, and the page its link opens, which sets the new password.
extension Console {
    func registerPasswordResetPages(on router: Router<BrokerRequestContext>) {
        // The mail's link opens a form rather than resetting at once: a GET changes nothing (mail scanners
        // follow links). Without a token, the form that asks for a mail.
        get("/password-reset", .anyone, on: router) { request in
            guard let token = request.query["token"], !token.isEmpty else {
                return request.page("password-reset-request", title: request.t("title.reset-your-password"))
            }
            return request.page("password-reset", title: request.t("title.choose-a-new-password"), values: ["token": token])
        }
        // The same page whatever the email: it tells nobody which emails have accounts.
        post("/password-reset/mail", .anyone, on: router) { request in
            try await request.submitting(
                "password-reset-request", title: request.t("title.reset-your-password"), fieldNames: ConsoleRequest.sameNames("email")
            ) {
                try await request.services.accounts.requestPasswordReset(
                    email: request.form["email"] ?? "", clientAddress: request.clientAddress, logger: request.logger)
                let email = EmailAddress.asStored(request.form["email"] ?? "")
                return request.page("password-reset-request", title: request.t("title.reset-your-password"), values: ["sent": true, "email": email])
            }
        }
        post("/password-reset", .anyone, on: router) { request in
            let token = request.form["token"] ?? ""
            return try await request.submitting(
                "password-reset", title: request.t("title.choose-a-new-password"), values: ["token": token],
                fieldNames: ConsoleRequest.sameNames("password")
            ) {
                try await request.services.accounts.resetPassword(
                    token: token, password: request.form.raw("password"), clientAddress: request.clientAddress, logger: request.logger)
                // Every session of the account has ended, this browser's too if it had one: sign in afresh.
                var response = request.redirect("/login", notice: "password-reset")
                response.setCookie(cookie(Self.sessionCookie, "", maxAge: 0))
                return response
            }
        }
    }
}
