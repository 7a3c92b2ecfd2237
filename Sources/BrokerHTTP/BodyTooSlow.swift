import Hummingbird

/// A body arrived too slowly (see `BodyPace`).
struct BodyTooSlow: Error, ProblemConvertible {
    var problem: Problem {
        var problem = Problem(
            status: .requestTimeout, slug: "body-too-slow", title: "Request body too slow",
            detail: "The body arrived slower than \(BodyPace.minimumBytesPerSecond / 1024) KiB/s after the first \(BodyPace.graceSeconds) seconds.")
        problem.headers[.connection] = "close"
        return problem
    }
}
