import BrokerDomain
import BrokerHTTP
import Foundation
import Hummingbird

/// Which mails an account receives (`/account/notifications`), and the one-click unsubscribe link every
/// notification carries (`/unsubscribe/<token>`, RFC 8058), which needs no sign-in.
extension Console {
    func registerNotificationPages(on router: Router<BrokerRequestContext>) {
        get("/account/notifications", .signedIn, on: router) { request in
            let principal = try request.caller
            let preferences = try await request.services.mailOutbox.preferences(
                accountID: principal.accountID, role: principal.role, logger: request.logger)
            return request.page("notifications", title: request.t("title.mails-you-receive"), values: Self.notificationValues(preferences))
        }
        // The page lists every kind it shows in `kinds` and checks the ones on in `on`.
        post("/account/notifications", .signedIn, on: router) { request in
            let principal = try request.caller
            let on = Set(request.form.values("on"))
            var changes: [MailKind: Bool] = [:]
            for value in request.form.values("kinds") {
                guard let kind = MailKind(rawValue: value) else { throw Problem.status(.badRequest, detail: "Unknown kind of mail: \(value).") }
                changes[kind] = on.contains(value)
            }
            try await request.services.mailOutbox.setPreferences(
                accountID: principal.accountID, role: principal.role, changes, logger: request.logger)
            return request.redirect("/account/notifications", notice: "notifications-saved")
        }
        // A GET only shows what the link would do: mail scanners open links, and must not unsubscribe anyone.
        get("/unsubscribe/:token", .anyone, on: router) { request in
            let token = request.context.parameters.get("token") ?? ""
            guard let link = try await request.services.mailOutbox.link(forToken: token, logger: request.logger) else {
                return request.errorPage(Self.unsubscribeLinkInvalid)
            }
            return request.page(
                "unsubscribe", title: request.t("title.turn-off-these-mails"),
                values: ["token": token, "sentence": request.t("unsubscribe.ask", ["kind": Self.notificationLabel(link.kind)]), "done": false])
        }
        post("/unsubscribe/:token", .anyone, body: .oneClick, on: router) { request in
            let token = request.context.parameters.get("token") ?? ""
            guard let link = try await request.services.mailOutbox.unsubscribe(token: token, logger: request.logger) else {
                return request.errorPage(Self.unsubscribeLinkInvalid)
            }
            return request.page(
                "unsubscribe", title: request.t("title.mails-turned-off"),
                values: ["token": token, "sentence": request.t("unsubscribe.done", ["kind": Self.notificationLabel(link.kind)]), "done": true])
        }
    }

    static let unsubscribeLinkInvalid = Problem(
        status: .notFound, slug: "unsubscribe-link-invalid", title: "This link is not valid",
        detail: "The unsubscribe link is incomplete or was altered. Sign in and choose your mails on your account page.")

    static func notificationValues(_ preferences: [(kind: MailKind, on: Bool)]) -> [String: Any] {
        ["kinds": preferences.map { ["value": $0.kind.rawValue, "label": notificationLabel($0.kind), "on": $0.on] as [String: Any] }]
    }

    /// What each kind of notification is, in the words of the account page and in its language.
    static func notificationLabel(_ kind: MailKind) -> String {
        let strings = ConsoleStrings.current
        return switch kind {
        case .newRequest: strings["notifications.kind.newRequest"]
        case .subscriptionEnding: strings["notifications.kind.subscriptionEnding"]
        case .firstDownload: strings["notifications.kind.firstDownload"]
        case .weeklyDigest: strings["notifications.kind.weeklyDigest"]
        case .runCancelled: strings["notifications.kind.runCancelled"]
        case .requestGranted: strings["notifications.kind.requestGranted"]
        case .requestExpired: strings["notifications.kind.requestExpired"]
        case .activation, .registrationAttempt, .apiKeyCreated, .passwordReset, .passwordChanged: strings["notifications.kind.security"]
        }
    }
}
