import BrokerDomain
import BrokerHTTP
import Foundation
import Hummingbird

/// The person's sharing preferences: which sample types they share with companies at all.
extension Console {
    func registerSharingPages(on router: Router<BrokerRequestContext>) {
        get("/sharing", .role(.user), on: router) { request in
            let preferences = try await request.services.sharing.preferences(of: try request.caller, logger: request.logger)
            return request.page("sharing", title: request.t("title.what-you-share"), values: Self.sharingValues(preferences))
        }
        // The page lists every type it shows in `types` and checks the shared ones in `shared`: a type the
        // page did not show (added to the server while it was open) keeps its setting.
        post("/sharing", .role(.user), on: router) { request in
            let shared = Set(request.form.values("shared"))
            let changes = request.form.values("types").map {
                SharingPreferences.Change(
                    type: SampleType(rawValue: $0).map { .value($0) } ?? .unreadable("is not a sample type"), shared: shared.contains($0))
            }
            _ = try await request.services.sharing.update(changes, by: try request.caller, logger: request.logger)
            return request.redirect("/sharing", notice: "sharing-saved")
        }
    }

    static func sharingValues(_ preferences: SharingPreferences) -> [String: Any] {
        [
            "types": preferences.entries.map { entry -> [String: Any] in
                [
                    "value": entry.type.rawValue, "label": Wording.typeWithUnit(entry.type), "shared": entry.shared,
                    "since": Wording.time(preferences.unshared[entry.type]),
                ]
            }
        ]
    }
}
