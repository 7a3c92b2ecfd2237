import Foundation

/// IANA time zone names as people's profiles hold them.
package enum TimeZoneName {
    /// Area/Location names only (Europe/Rome, America/New_York) and UTC: an abbreviation (CET, EST5EDT), a
    /// fixed offset (+01:00, Etc/GMT-1) or a legacy alias (US/Eastern) is refused — the first two have no
    /// daylight-saving rules, so they would put a summer evening on the wrong day, and PostgreSQL reads some
    /// of them as abbreviations before zones.
    package static func isValid(_ identifier: String) -> Bool {
        if identifier == "UTC" { return true }
        guard let slash = identifier.firstIndex(of: "/"), known.contains(identifier) else { return false }
        return areas.contains(String(identifier[..<slash]))
    }

    /// The IANA regions; `Etc/` (fixed offsets) and the legacy `US/`, `Canada/` … aliases are not among them.
    private static let areas: Set<String> = [
        "Africa", "America", "Antarctica", "Arctic", "Asia", "Atlantic", "Australia", "Europe", "Indian", "Pacific",
    ]

    private static let known = Set(TimeZone.knownTimeZoneIdentifiers)

    package static let message = "must be an IANA time zone name such as Europe/Rome"
}
