import Foundation
import Synchronization

/// The delivery loop's verdicts on its receivers' URLs (`WebhookURLPolicy.check`), each reused for `validity`.
///
/// The check resolves the host on a resolver thread: at every post that was two thread hand-offs inside a
/// post's round trip, which to a fast receiver is under a millisecond (the webhook benchmark). A post on a
/// kept-alive connection does not resolve the host again anyway, so a verdict a second old protects as well as
/// a fresh one: the next connection after a host comes to resolve to a private address is refused at most
/// `validity` after the change, as before (the check and the client's own resolution were never one).
final class RecentURLChecks: Sendable {
    typealias Verdict = Result<URL, WebhookURLPolicy.Rejection>

    private let validity: Duration
    private let check: @Sendable (String) async -> Verdict
    private let verdicts = Mutex<[String: (verdict: Verdict, at: ContinuousClock.Instant)]>([:])

    /// Past this many URLs, the stale verdicts are dropped (one URL per third party; a bound, not a cache size).
    static let pruneAbove = 1024

    init(validity: Duration, check: @escaping @Sendable (String) async -> Verdict) {
        self.validity = validity
        self.check = check
    }

    /// How many URLs have a verdict kept.
    var count: Int { verdicts.withLock(\.count) }

    /// The verdict on `url`: the last one if it was reached within `validity` before `now`, otherwise a new one.
    func verdict(on url: String, now: ContinuousClock.Instant = .now) async -> Verdict {
        let validity = validity
        if let recent = verdicts.withLock({ $0[url] }), now - recent.at < validity { return recent.verdict }
        let verdict = await check(url)
        // A name that did not resolve may be a passing failure of the resolver: the next post asks again rather
        // than fail every post of the coming second (each a spent attempt, and the party thought slow).
        if case .failure(.doesNotResolve) = verdict { return verdict }
        verdicts.withLock { verdicts in
            if verdicts.count >= Self.pruneAbove { verdicts = verdicts.filter { now - $0.value.at < validity } }
            verdicts[url] = (verdict, now)
        }
        return verdict
    }
}
