/// What can go wrong when a person changes their sharing preferences.
package enum SharingError: Error, Equatable {
    /// Settings that cannot be applied, each by its position in what was sent; nothing was changed.
    case invalid([Violation])

    /// One unusable setting: its index in the list sent, and why.
    package struct Violation: Sendable, Equatable {
        package var index: Int
        package var message: String

        package init(index: Int, message: String) {
            self.index = index
            self.message = message
        }
    }
}
