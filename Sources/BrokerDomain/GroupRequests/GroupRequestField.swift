/// A field of a group request as the domain names it in its errors. Each edge maps these to its own names
/// in one table: the API to JSON paths (`demographics.ageMin`), the console to its form's fields.
package enum GroupRequestField: Hashable, Sendable {
    /// The list of types as a whole (none named), and the type at an index.
    case types
    case type(index: Int)
    /// A filter's type and bounds, by the filter's index.
    case filterType(index: Int)
    case filterMin(index: Int)
    case filterMax(index: Int)
    case ageMin
    case ageMax
    case sex
    /// The criteria as a whole: at least one filter or demographic criterion.
    case criteria
    case windowFrom
    case windowTo
    /// The window as a whole: how many cells it makes and what they cost.
    case window
    case bucket
    case purpose
    case subscriptionDays
    case cellLoss
    case purposeCode
}
