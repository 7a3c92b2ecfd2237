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
            return request.page("notifications", title: "Mails you receive", values: Self.notificationValues(preferences))
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
                "unsubscribe", title: "Turn off these mails",
                values: ["token": token, "kind": Self.notificationLabel(link.kind), "done": false])
        }
        post("/unsubscribe/:token", .anyone, body: .oneClick, on: router) { request in
            let token = request.context.parameters.get("token") ?? ""
            guard let link = try await request.services.mailOutbox.unsubscribe(token: token, logger: request.logger) else {
                return request.errorPage(Self.unsubscribeLinkInvalid)
            }
            return request.page(
                "unsubscribe", title: "Mails turned off", values: ["token": token, "kind": Self.notificationLabel(link.kind), "done": true])
        }
    }

    static let unsubscribeLinkInvalid = Problem(
        status: .notFound, slug: "unsubscribe-link-invalid", title: "This link is not valid",
        detail: "The unsubscribe link is incomplete or was altered. Sign in and choose your mails on your account page.")

    static func notificationValues(_ preferences: [(kind: MailKind, on: Bool)]) -> [String: Any] {
        ["kinds": preferences.map { ["value": $0.kind.rawValue, "label": notificationLabel($0.kind), "on": $0.on] as [String: Any] }]
    }

    /// What each kind of notification is, in the words of the account page.
    static func notificationLabel(_ kind: MailKind) -> String {
        switch kind {
        case .newRequest: "A company sends me a request"
        case .subscriptionEnding: "A subscription I granted ends in three days"
        case .firstDownload: "A company downloads what I shared for the first time"
        case .weeklyDigest: "Weekly: the group requests my data contributed to"
        case .runCancelled: "A run I joined is cancelled"
        case .requestGranted: "A person grants one of our requests"
        case .requestExpired: "One of our requests expires"
        case .activation, .registrationAttempt, .apiKeyCreated, .passwordReset, .passwordChanged: "Security mails about this account"
        }
    }
}
