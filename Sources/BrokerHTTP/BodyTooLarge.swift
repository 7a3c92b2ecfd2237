import Hummingbird

/// A body exceeded its limit.
package struct BodyTooLarge: Error, ProblemConvertible {
    let maxBytes: Int
    package init(maxBytes: Int) { self.maxBytes = maxBytes }
    package var problem: Problem {
        Problem(
            status: .contentTooLarge, slug: "body-too-large", title: "Request body too large",
            detail: "The body is over the limit of \(maxBytes / (1024 * 1024)) MiB for this endpoint.")
    }
}
