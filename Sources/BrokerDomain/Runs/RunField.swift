/// A field of a run's draft as the domain names it in its errors. Each edge maps these to its own names in
/// one table: the API to JSON paths (`path.format`), the console to its form's fields.
package enum RunField: Hashable, Sendable {
    case name
    case startsAt
    case durationMinutes
    case maxParticipants
    case path
    case pathFormat
}
