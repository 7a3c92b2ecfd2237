import BrokerDomain
import BrokerHTTP
import Foundation
import HTTPTypes
import Hummingbird
import OpenAPIRuntime

/// Pages for everyone: the front door, registration, activation, signing in and out, the account itself.
extension Console {
    func registerAccountPages(on router: Router<BrokerRequestContext>) {
        get("/", .anyone, on: router) { request in
            guard let principal = request.principal else { return .redirect(to: "/login", type: .normal) }
            return .redirect(to: Self.home(of: principal.role), type: .normal)
        }

        get("/login", .anyone, on: router) { request in
            if let principal = request.principal { return .redirect(to: Self.home(of: principal.role), type: .normal) }
            return request.page("login", title: request.t("title.sign-in"), values: try await Self.runLists(request))
        }
        post("/login", .anyone, on: router) { request in
            try await request.submitting("login", title: request.t("title.sign-in"), fieldNames: ConsoleRequest.sameNames("email", "password")) {
                switch try await request.services.accounts.logIn(
                    email: request.form["email"] ?? "", password: request.form.raw("password"),
                    clientAddress: request.clientAddress, logger: request.logger)
                {
                case .session(let session): return signedIn(request, session)
                case .secondFactorRequired(let challenge): return askForSecondFactor(request, challenge)
                }
            }
        }
        post("/logout", .signedIn, on: router) { request in
            try await request.services.accounts.logOut(try request.caller, logger: request.logger)
            var response = request.redirect("/login", notice: "signed-out")
            response.setCookie(cookie(Self.sessionCookie, "", maxAge: 0))
            return response
        }

        get("/register", .anyone, on: router) { request in request.page("register", title: request.t("title.create-an-account")) }
        get("/register/person", .anyone, on: router) { request in
            request.page("register-person", title: request.t("title.create-an-account-to-share-your-data"))
        }
        post("/register/person", .anyone, on: router) { request in
            try await request.submitting(
                "register-person", title: request.t("title.create-an-account-to-share-your-data"),
                fieldNames: ConsoleRequest.sameNames("email", "password", "fiscalCode", "fullName", "birthDate", "sex")
            ) {
                let form = request.form
                // New or taken, the same page (the holder of a taken email or fiscal code is mailed instead).
                _ = try await request.services.accounts.register(
                    AccountService.UserRegistration(
                        email: form["email"] ?? "", password: form.raw("password"), fiscalCode: form["fiscalCode"] ?? "",
                        fullName: form["fullName"] ?? "", birthDate: form["birthDate"] ?? "", sex: Wording.sexCode(form["sex"]) ?? "",
                        language: request.language),
                    logger: request.logger)
                return request.page(
                    "registered", title: request.t("title.check-your-mail"), values: ["email": EmailAddress.asStored(form["email"] ?? "")])
            }
        }
        get("/register/company", .anyone, on: router) { request in
            request.page("register-company", title: request.t("title.create-a-company-account"))
        }
        post("/register/company", .anyone, on: router) { request in
            try await request.submitting(
                "register-company", title: request.t("title.create-a-company-account"),
                fieldNames: ConsoleRequest.sameNames("email", "password", "vatNumber", "companyName", "description")
            ) {
                let form = request.form
                _ = try await request.services.accounts.register(
                    AccountService.ThirdPartyRegistration(
                        email: form["email"] ?? "", password: form.raw("password"), vatNumber: form["vatNumber"] ?? "",
                        companyName: form["companyName"] ?? "", description: form["description"], language: request.language),
                    logger: request.logger)
                return request.page(
                    "registered", title: request.t("title.check-your-mail"), values: ["email": EmailAddress.asStored(form["email"] ?? "")])
            }
        }

        // The same answer whatever the email: the page tells nobody which emails have pending accounts.
        get("/activation-mail", .anyone, on: router) { request in
            request.page("activation-mail", title: request.t("title.send-the-activation-mail-again"))
        }
        post("/activation-mail", .anyone, on: router) { request in
            try await request.submitting(
                "activation-mail", title: request.t("title.send-the-activation-mail-again"), fieldNames: ConsoleRequest.sameNames("email")
            ) {
                try await request.services.accounts.resendActivation(email: request.form["email"] ?? "", logger: request.logger)
                let email = EmailAddress.asStored(request.form["email"] ?? "")
                return request.page(
                    "activation-mail", title: request.t("title.send-the-activation-mail-again"), values: ["sent": true, "email": email])
            }
        }

        // The mail's link opens a form rather than activating at once: a GET must not change anything (mail
        // scanners follow links), and an account created without a password sets one here.
        get("/activate", .anyone, on: router) { request in
            request.page("activate", title: request.t("title.activate-your-account"), values: ["token": request.query["token"] ?? ""])
        }
        post("/activate", .anyone, on: router) { request in
            let token = request.form["token"] ?? ""
            return try await request.submitting(
                "activate", title: request.t("title.activate-your-account"), values: ["token": token],
                fieldNames: ConsoleRequest.sameNames("password")
            ) {
                let password = request.form.raw("password")
                _ = try await request.services.accounts.activate(token: token, password: password.isEmpty ? nil : password, logger: request.logger)
                return request.page("activated", title: request.t("title.your-account-is-active"))
            }
        }

        get("/account", .signedIn, on: router) { request in
            let account = try await request.services.accounts.account(of: try request.caller, logger: request.logger)
            return request.page("account", title: request.t("title.your-account"), values: Self.accountValues(account))
        }
        get("/account/password", .signedIn, on: router) { request in request.page("password", title: request.t("title.change-your-password")) }
        post("/account/password", .signedIn, on: router) { request in
            try await request.submitting(
                "password", title: request.t("title.change-your-password"),
                fieldNames: ConsoleRequest.sameNames("currentPassword", "newPassword", "keepApiKeys")
            ) {
                let caller = try request.caller
                // Only a company has keys, and only its form has the box: unticked (or absent) revokes them.
                let keepAPIKeys: Bool? = caller.role == .thirdParty ? request.form["keepApiKeys"] != nil : nil
                let updated = try await request.services.accounts.update(
                    caller,
                    with: .init(
                        currentPassword: request.form.raw("currentPassword"), newPassword: request.form.raw("newPassword"),
                        keepAPIKeys: keepAPIKeys),
                    clientAddress: request.clientAddress, logger: request.logger)
                switch (keepAPIKeys, updated.revokedAPIKeys) {
                case (true?, _): return request.redirect("/account", notice: "password-changed-keys-kept")
                case (false?, let count?): return request.redirect("/account?count=\(count)", notice: "password-changed-keys-revoked")
                default: return request.redirect("/account", notice: "password-changed")
                }
            }
        }

        // The person's time zone: the days of their charts and of every figure about them.
        post("/account/time-zone", .role(.user), on: router) { request in
            let caller = try request.caller
            let account = try await request.services.accounts.account(of: caller, logger: request.logger)
            return try await request.submitting(
                "account", title: request.t("title.your-account"), values: Self.accountValues(account),
                fieldNames: ConsoleRequest.sameNames("timeZone")
            ) {
                _ = try await request.services.accounts.update(
                    caller, with: .init(timeZone: request.form["timeZone"] ?? ""), clientAddress: request.clientAddress, logger: request.logger)
                return request.redirect("/account", notice: "time-zone-changed")
            }
        }

        // The account's language: its pages from the next one on, and its mails.
        post("/account/language", .signedIn, on: router) { request in
            let caller = try request.caller
            let account = try await request.services.accounts.account(of: caller, logger: request.logger)
            return try await request.submitting(
                "account", title: request.t("title.your-account"), values: Self.accountValues(account),
                fieldNames: ConsoleRequest.sameNames("language")
            ) {
                guard let language = request.form["language"].flatMap(Language.init(tag:)) else {
                    throw Problem.validationFailed([FieldError(field: "language", message: "must be one of en, it")])
                }
                _ = try await request.services.accounts.update(
                    caller, with: .init(language: language), clientAddress: request.clientAddress, logger: request.logger)
                return request.redirect("/account", notice: "language-changed")
            }
        }

        get("/account/delete", .role(.user), on: router) { request in request.page("delete-account", title: request.t("title.delete-your-account")) }
        post("/account/delete", .role(.user), on: router) { request in
            try await request.submitting(
                "delete-account", title: request.t("title.delete-your-account"), fieldNames: ConsoleRequest.sameNames("password", "confirm")
            ) {
                guard request.form["confirm"] == "yes" else {
                    throw Problem.validationFailed([FieldError(field: "confirm", message: "Tick the box to confirm that everything is deleted.")])
                }
                try await request.services.accounts.erase(
                    try request.caller, password: request.form.raw("password"), clientAddress: request.clientAddress, logger: request.logger)
                var signedOut = request
                signedOut.principal = nil
                var response = signedOut.page("deleted", title: request.t("title.your-account-is-deleted"))
                response.setCookie(cookie(Self.sessionCookie, "", maxAge: 0))
                return response
            }
        }

        // The API's streamed export, as a file: everything as JSON, or the samples as FHIR (`?format=fhir`).
        get("/export", .role(.user), on: router) { request in
            let fhir = request.query["format"] == "fhir"
            let download =
                fhir
                ? try await request.services.budgeted.personalObservations(of: try request.caller, form: .bundle, logger: request.logger)
                : try await request.services.budgeted.personalExport(of: try request.caller, logger: request.logger)
            let sent = download.encoded(acceptEncoding: request.request.headers[.acceptEncoding])
            var response = Response(openAPI: sent.head, body: sent.body)
            response.headers[.contentDisposition] =
                fhir ? #"attachment; filename="data4help-observations.fhir.json""# : #"attachment; filename="data4help-export.json""#
            return response
        }
    }

    static func home(of role: Role) -> String {
        switch role {
        case .user: "/inbox"
        case .thirdParty: "/company"
        case .auditor: "/audit"
        }
    }

    static func accountValues(_ account: Account) -> [String: Any] {
        var values: [String: Any] = ["email": account.email, "createdAt": Wording.time(account.createdAt)]
        switch account.profile {
        case .user(let fullName, let fiscalCode, let birthDate, let sex, let timeZone):
            values["person"] = [
                "fullName": fullName, "fiscalCode": fiscalCode, "birthDate": birthDate,
                "sex": Wording.strings[sex == "F" ? "form.female" : "form.male"],
                "timeZone": timeZone ?? "", "timeZoneUnknown": timeZone == nil,
            ]
        case .thirdParty(let companyName, let vatNumber, let description):
            values["company"] = ["companyName": companyName, "vatNumber": vatNumber, "description": description ?? ""]
        case .auditor:
            values["auditor"] = true
        }
        return values
    }
}
