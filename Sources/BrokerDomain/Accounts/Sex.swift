/// A person's sex as declared at registration and encoded in the fiscal code.
package enum Sex: String, Sendable, Hashable, CaseIterable {
    case female = "F"
    case male = "M"
}
