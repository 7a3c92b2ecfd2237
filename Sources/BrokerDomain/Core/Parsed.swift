/// A value an edge read from its input (a JSON body, a form), or why it could not, in the edge's words.
/// A service given one that could not be read skips the rules that need it and reports the edge's reason in
/// its place, so one answer still names every problem of the input at once.
package enum Parsed<Value: Sendable>: Sendable {
    case value(Value)
    case unreadable(String)

    /// The value, nil when unreadable.
    package var read: Value? {
        if case .value(let value) = self { return value }
        return nil
    }
}
