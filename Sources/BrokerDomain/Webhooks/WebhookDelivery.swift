import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO
import ServiceLifecycle

/// The webhook delivery loop, run by every server instance: claims due events from the outbox, posts
/// them signed to the third party's URL, and records each attempt. State lives only in the database
/// (leases, attempt counts), so any instance picks up what a stopped or crashed one left.
package struct WebhookDelivery: Service {
    package init(
        client: DatabasePool, policy: WebhookURLPolicy, configuration: WebhookDeliveryConfiguration, logger: Logger, clock: WallClock = .system
    ) {
        self.clock = clock
        self.client = client
        self.policy = policy
        self.configuration = configuration
        self.logger = logger
        urlChecks = RecentURLChecks(validity: configuration.urlRecheck) { await policy.check($0) }
    }

    let client: DatabasePool
    let policy: WebhookURLPolicy
    /// `policy`'s verdicts, reused for `urlRecheck` rather than reached again at every post.
    let urlChecks: RecentURLChecks
    let configuration: WebhookDeliveryConfiguration
    let logger: Logger
    /// The time a delivery's signature carries.
    let clock: WallClock

    package func run() async throws {
        var http = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: Self.timeAmount(configuration.connectTimeout), read: Self.timeAmount(configuration.requestTimeout)))
        // A failed connection is an attempt like any other and is retried with backoff; the client's own
        // connection retries would only stretch the attempt until the timeout.
        http.connectionPool.retryConnectionEstablishment = false
        // The pool limits connections per host, and several third parties may share a host (a hosted
        // webhook relay): a per-host limit below ours would queue one party's posts behind another's
        // hanging ones. The loop already bounds how many posts are in flight.
        http.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = configuration.maxInFlight
        // The server bootstraps no tracer, and the client's default (the global no-op one) still built each
        // post's span attributes, parsing its URL once more: 5 % of the delivery's processor time in a profile.
        http.tracing.tracer = nil
        let httpClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: http)
        await deliverUntilShutdown(with: httpClient)
        try? await httpClient.shutdown()
    }

    private enum Wake: Sendable {
        case claimed([WebhookDeliveryStore.ClaimedEvent], at: ContinuousClock.Instant, limit: Int)
        case claimFailed
        case posted(WebhookDeliveryStore.Finished)
        /// A batch's record returned; with the batch when it failed (to be written again).
        case recorded(failed: [WebhookDeliveryStore.Finished]?)
        case released
        case recordDue
        /// The pause after a failed record is over.
        case recordResume
        /// Graceful shutdown: the posts' own time is up.
        case cutPosts
        case postsCut
        case tick
        /// An idle loop's look for due events between ticks came back: the latest time at which an event
        /// became due, if any is.
        case probed(latestDue: Date?)
        /// Time to look for a fast party's post that has run past `fastPost`.
        case watch
        /// `claimInterval` has passed since the last claim.
        case spaced
        case stop
    }

    /// A claimed event waiting for a free slot of its third party (or of the instance).
    private struct Waiting {
        var event: WebhookDeliveryStore.ClaimedEvent
        /// When the claim that leased it was sent: its lease runs out `lease` after this at the earliest.
        var claimedAt: ContinuousClock.Instant
        /// Claim order, across parties: the slots go to the longest-waiting event first.
        var order: Int
    }

    /// The loop's parts run as child tasks and report back here, so that no part waits for another:
    /// claims, posts, outcome records and the poll timer overlap. Claims lease several rounds of posts
    /// ahead (`claimDepth`); a post's slot is free again the moment its response is in, and its outcome
    /// joins the next batch record (`recordBatch`, `recordDelay`) instead of a transaction of its own.
    /// One party's hanging posts hold only that party's slots; nothing else waits for them.
    ///
    /// A party whose receiver answers fast (`fastPost`) is claimed deeper (`fastClaimDepth`): with the
    /// shallow depth, each claim's round trip bounded a fast receiver to one claim's worth of events per
    /// round trip. When one of its posts is slow or fails, it is shallow again and the events it holds
    /// beyond the shallow depth are given back at once, rather than waiting out their lease.
    ///
    /// A record that fails (no pool connection within `recordWait`, the database away) keeps its batch and
    /// writes it again after `pollInterval`: an outcome is dropped only when the loop ends, and then its
    /// event is posted again after its lease. Until recorded, an event stays leased and the next one of its
    /// request is not claimed, so order per request holds.
    ///
    /// On graceful shutdown it stops claiming, gives back the events it claimed but has not posted, lets
    /// the posts in flight finish for up to `shutdownPostWait` (then cuts them short: failed attempts,
    /// posted again later), and then records the outcomes within `shutdownRecordWait`, so that a post begun
    /// just before the stop is still recorded inside `d4h serve`'s graceful deadline. On cancellation
    /// everything is abandoned and the events are claimed again when their lease ends (at least once,
    /// never lost).
    private func deliverUntilShutdown(with http: HTTPClient) async {
        let perParty = configuration.maxInFlightPerThirdParty
        let depth = configuration.claimDepth
        let heldPerParty = perParty * depth
        let heldPerFastParty = perParty * configuration.fastClaimDepth
        // Each claim is a transaction: after a backlog has been found, claim again once half a party's
        // claimed share is done, when a record may have let a request's next event go, when everything
        // is done, or at a poll tick; never one claim per finished post.
        let refill = max(1, heldPerParty / 2)
        let startBefore = configuration.requestTimeout + configuration.leaseMargin
        let fastPostMs = Int(configuration.fastPost.inSeconds * 1000)
        await withTaskGroup(of: Wake.self) { group in
            var waiting: [UUID: [Waiting]] = [:]
            var inFlight: [UUID: Int] = [:]
            var posting = 0
            // Claimed and not yet finished (waiting or in flight), per party and in all.
            var held: [UUID: Int] = [:]
            var heldTotal = 0
            var claimOrder = 0
            var claiming = false
            var moreDue = true
            var ticking = false
            // An idle loop looks every `idleProbeInterval` between its ticks for the latest time at which an
            // event became due. A look that finds one later than `leftDue` starts a claim. If that claim comes
            // back empty (the due events wait behind their request's earlier ones, say), their time becomes
            // `leftDue`: they start no more claims (one a look, 10 a second, before), and an event queued
            // later still does. The ticks claim as before, whatever the looks found.
            var probing = false
            var probedDue: Date?
            var leftDue: Date?
            let probes = configuration.idleProbeInterval < configuration.pollInterval
            var finishedSinceClaim = 0
            // When the last claim was sent, and whether a timer waits for `claimInterval` to pass since.
            var lastClaim: ContinuousClock.Instant?
            var spacing = false
            var finished: [WebhookDeliveryStore.Finished] = []
            var recording = false
            var recordTimer = false
            // After a failed record, until `.recordResume`: no record starts (no retrying in a tight loop).
            var recordPaused = false
            // Once stopping and every post is done: recording's own deadline.
            var recordDeadline: ContinuousClock.Instant?
            // Gives-back under way (a slowed party's excess, or a stopping server's queue).
            var releasing = 0
            var stopping = false
            // Parties claimed `fastClaimDepth` ahead, and how many fast posts in a row each party has had.
            var fast: Set<UUID> = []
            var fastStreak: [UUID: Int] = [:]
            // When each party's last post finished: a fast party that has just run out of claimed events is
            // still busy (its backlog waits in the database), one idle since `pollInterval` is not.
            var lastFinished: [UUID: ContinuousClock.Instant] = [:]
            // When each post in flight started: a fast party's post running longer than `fastPost` makes it
            // shallow without waiting for the post's timeout.
            var postStarts: [UUID: (party: UUID, at: ContinuousClock.Instant)] = [:]
            // A timer is set while a fast party posts: nothing else may wake the loop while its posts hang.
            var watching = false

            func heldAllowed(_ party: UUID) -> Int { fast.contains(party) ? heldPerFastParty : heldPerParty }
            /// A fast party that holds events, or ran out of them within `pollInterval`: its next claim takes its
            /// deep share. Without the second, a fast receiver drained its 40 events between two claims and was
            /// claimed 40 again each time (measured: 39 events a claim, a claim every 9 ms, 0.2 of direct posts).
            func busyFast(_ party: UUID, at now: ContinuousClock.Instant) -> Bool {
                guard fast.contains(party) else { return false }
                return held[party] != nil || lastFinished[party].map { now - $0 < configuration.pollInterval } ?? false
            }
            // The instance's bound on claimed events: every slot's shallow depth, plus the deeper share of
            // as many fast parties as can post at once (many fast parties must not make one claim huge).
            let fastShares = max(1, configuration.maxInFlight / max(1, perParty))
            // Only fast parties that hold events count: an idle one (fast hours ago, say) would otherwise widen
            // every claim for as long as the server runs. Its next claim is shallow, and the deep ones follow.
            func maxHeld() -> Int {
                let now = ContinuousClock.now
                let busy = fast.count(where: { busyFast($0, at: now) })
                return configuration.maxInFlight * depth + min(busy, fastShares) * (heldPerFastParty - heldPerParty)
            }

            func letGo(_ event: WebhookDeliveryStore.ClaimedEvent) {
                held[event.thirdPartyID, default: 1] -= 1
                if held[event.thirdPartyID] == 0 { held[event.thirdPartyID] = nil }
                heldTotal -= 1
            }

            func giveBack(_ events: [WebhookDeliveryStore.ClaimedEvent]) {
                guard !events.isEmpty else { return }
                releasing += 1
                group.addTask {
                    await release(events)
                    return .released
                }
            }

            /// The party is shallow again: the events it holds beyond the shallow depth, newest first, go back.
            func slowed(_ party: UUID) {
                fastStreak[party] = nil
                guard fast.remove(party) != nil else { return }
                trimToShallowShare(party)
            }

            /// A shallow party's waiting events beyond its share, newest first, go back: after it slowed, or when
            /// a claim sent while it was fast comes back after it slowed.
            func trimToShallowShare(_ party: UUID) {
                guard !fast.contains(party) else { return }
                let excess = min((held[party] ?? 0) - heldPerParty, waiting[party]?.count ?? 0)
                guard excess > 0, let queue = waiting[party] else { return }
                let back = queue.suffix(excess).map(\.event)
                waiting[party] = queue.count == excess ? nil : Array(queue.dropLast(excess))
                back.forEach(letGo)
                logger.info(
                    "webhook receiver slowed: claimed events given back",
                    metadata: ["account.id": "\(party)", "webhook.events": "\(back.count)"])
                giveBack(back)
            }

            func startRecord() {
                let batch = Array(finished.prefix(configuration.recordBatch))
                finished.removeFirst(batch.count)
                recording = true
                let wait = recordDeadline.map { max(.zero, $0 - ContinuousClock.now) } ?? configuration.recordWait
                group.addTask { .recorded(failed: await record(batch, waitingAtMost: wait) ? nil : batch) }
            }

            group.addTask {
                // Wakes the loop at the start of a graceful shutdown, even while every post hangs.
                await cancelWhenGracefulShutdown { try? await Task.sleep(for: .seconds(365 * 24 * 3600)) }
                return .stop
            }
            while !Task.isCancelled {
                if Task.isShuttingDownGracefully, !stopping {
                    stopping = true
                    let unposted = waiting.values.flatMap { $0.map(\.event) }
                    waiting = [:]
                    unposted.forEach(letGo)
                    giveBack(unposted)
                    if posting > 0 {
                        let wait = configuration.shutdownPostWait
                        group.addTask {
                            try? await Task.sleep(for: wait)
                            return .cutPosts
                        }
                    }
                }
                if stopping, posting == 0, recordDeadline == nil {
                    recordDeadline = .now + configuration.shutdownRecordWait
                }

                // A fast party with a post running past `fastPost` is slow now, before that post ends.
                if !fast.isEmpty {
                    let now = ContinuousClock.now
                    let late = Set(postStarts.values.filter { fast.contains($0.party) && now - $0.at > configuration.fastPost }.map(\.party))
                    late.forEach(slowed)
                }

                // Posts: the longest-waiting event of any party with a free slot, while the instance has one.
                while !stopping, posting < configuration.maxInFlight {
                    var next: (party: UUID, order: Int)?
                    for (party, queue) in waiting where (inFlight[party] ?? 0) < perParty {
                        if let head = queue.first, head.order < next?.order ?? .max { next = (party, head.order) }
                    }
                    guard let party = next?.party, let head = waiting[party]?.first else { break }
                    waiting[party]?.removeFirst()
                    if waiting[party]?.isEmpty == true { waiting[party] = nil }
                    // A post that might outlast the lease is not started: another instance could claim
                    // and send the event meanwhile. The lease runs out and it is claimed again.
                    if ContinuousClock.now + startBefore > head.claimedAt + configuration.lease {
                        logger.info(
                            "webhook event left for its lease to run out", metadata: ["webhook.event.id": "\(head.event.id)"])
                        letGo(head.event)
                        continue
                    }
                    inFlight[party, default: 0] += 1
                    posting += 1
                    let event = head.event
                    postStarts[event.id] = (party, .now)
                    group.addTask { .posted(await deliver(event, with: http)) }
                }
                if !watching, !fast.isEmpty, postStarts.values.contains(where: { fast.contains($0.party) }) {
                    watching = true
                    let interval = configuration.fastPost / 2
                    group.addTask {
                        try? await Task.sleep(for: interval)
                        return .watch
                    }
                }

                // Records: at once when a batch is full or when stopping, otherwise after `recordDelay`.
                let recordTimeUp = recordDeadline.map { ContinuousClock.now >= $0 } ?? false
                if !recording, !recordPaused, !recordTimeUp, !finished.isEmpty, stopping || finished.count >= configuration.recordBatch {
                    startRecord()
                } else if !recording, !recordPaused, !finished.isEmpty, !recordTimer {
                    recordTimer = true
                    let delay = configuration.recordDelay
                    group.addTask {
                        try? await Task.sleep(for: delay)
                        return .recordDue
                    }
                }

                // Claims: one at a time, beside the posts, while there is room and a backlog may be waiting.
                let maxHeld = maxHeld()
                let wanted = !stopping && !claiming && moreDue && (heldTotal == 0 || maxHeld - heldTotal >= min(refill, maxHeld))
                // While events are held, claims are `claimInterval` apart: every record makes one worth trying.
                let early = lastClaim.map { heldTotal > 0 && ContinuousClock.now - $0 < configuration.claimInterval } ?? false
                if wanted, early, !spacing, let last = lastClaim {
                    spacing = true
                    let wait = configuration.claimInterval - (ContinuousClock.now - last)
                    group.addTask {
                        try? await Task.sleep(for: wait)
                        return .spaced
                    }
                }
                if wanted, !early {
                    claiming = true
                    lastClaim = .now
                    finishedSinceClaim = 0
                    let now = ContinuousClock.now
                    lastFinished = lastFinished.filter { now - $0.value < configuration.pollInterval }
                    let claimable = Set(held.keys).union(fast.filter { busyFast($0, at: now) })
                    let rooms = Dictionary(uniqueKeysWithValues: claimable.map { party in (party, heldAllowed(party) - (held[party] ?? 0)) })
                    // No more than the parties it knows have room for, plus one party's shallow share for any
                    // other: the claim reads a few candidates per event it may take (and probes each for an
                    // earlier pending event of its request), and the instance's spare slots would otherwise
                    // have it read hundreds to top up one fast party by a few (measured: 44 % of PostgreSQL's
                    // time while delivering one party's backlog).
                    let limit = min(maxHeld - heldTotal, rooms.values.reduce(0) { $0 + max(0, $1) } + heldPerParty)
                    group.addTask {
                        let at = ContinuousClock.now
                        do {
                            // While the database is down a claim waits for a pool connection until the pool
                            // gives up (about a minute); shutting down must not wait for that.
                            let claimed = try await cancelWhenGracefulShutdown {
                                try await client.withConnection { connection in
                                    try await WebhookDeliveryStore.claim(
                                        limit: limit, defaultRoom: heldPerParty, room: rooms, lease: configuration.lease,
                                        on: connection, logger: logger)
                                }
                            }
                            return .claimed(claimed, at: at, limit: limit)
                        } catch {
                            // The database may be down or restarting; try again after a poll interval. A
                            // claim cut short by the shutdown is no failure.
                            if !Task.isShuttingDownGracefully {
                                logger.warning("claiming webhook events failed", metadata: ["error": "\(String(reflecting: error))"])
                            }
                            return .claimFailed
                        }
                    }
                    // Claim again when something may have become due since this claim looked (finished
                    // posts, records), when it comes back full, or at the next tick.
                    moreDue = false
                }
                if probes, !stopping, !claiming, !moreDue, !probing, heldTotal == 0 {
                    probing = true
                    let interval = configuration.idleProbeInterval
                    group.addTask {
                        let latest = try? await cancelWhenGracefulShutdown {
                            try await Task.sleep(for: interval)
                            return try await latestDue(waitingAtMost: interval)
                        }
                        return .probed(latestDue: latest ?? nil)
                    }
                }
                if !stopping, !claiming, !moreDue, !ticking {
                    ticking = true
                    let interval = configuration.pollInterval
                    group.addTask {
                        await cancelWhenGracefulShutdown { try? await Task.sleep(for: interval) }
                        return .tick
                    }
                }

                if stopping, posting == 0, !recording, releasing == 0, !claiming {
                    if finished.isEmpty { break }
                    if let deadline = recordDeadline, ContinuousClock.now >= deadline {
                        // Their events stay leased and are posted again when the lease runs out.
                        logger.warning(
                            "webhook outcomes left unrecorded as the server stopped", metadata: ["webhook.attempts": "\(finished.count)"])
                        break
                    }
                }
                switch await group.next() {
                case .claimed(let events, let at, let limit):
                    claiming = false
                    if let probed = probedDue, events.isEmpty { leftDue = max(leftDue ?? probed, probed) }
                    probedDue = nil
                    for event in events {
                        held[event.thirdPartyID, default: 0] += 1
                        heldTotal += 1
                    }
                    if stopping {
                        // Claimed as the shutdown began: give them back too.
                        events.forEach(letGo)
                        giveBack(events)
                        break
                    }
                    for event in events {
                        waiting[event.thirdPartyID, default: []].append(Waiting(event: event, claimedAt: at, order: claimOrder))
                        claimOrder += 1
                    }
                    // A party that slowed while this claim ran was given its deep share: back to the shallow one.
                    Set(events.map(\.thirdPartyID)).forEach(trimToShallowShare)
                    // A full claim means more may be due; otherwise claim again once posts free some
                    // party's share or a record lets a request's next event go (below), or at the next tick.
                    if events.count == limit { moreDue = true }
                case .claimFailed:
                    claiming = false
                    moreDue = false
                    probedDue = nil
                case .posted(let done):
                    posting -= 1
                    inFlight[done.event.thirdPartyID, default: 1] -= 1
                    if inFlight[done.event.thirdPartyID] == 0 { inFlight[done.event.thirdPartyID] = nil }
                    letGo(done.event)
                    postStarts[done.event.id] = nil
                    let party = done.event.thirdPartyID
                    if done.outcome.delivered, done.outcome.durationMs < fastPostMs {
                        fastStreak[party, default: 0] += 1
                        if fastStreak[party, default: 0] >= perParty, fast.insert(party).inserted { moreDue = true }
                    } else {
                        slowed(party)
                    }
                    lastFinished[party] = fast.contains(party) ? .now : nil
                    finished.append(done)
                    finishedSinceClaim += 1
                    // Room again (and that party's budget): its next events may be waiting.
                    if finishedSinceClaim >= refill || heldTotal == 0 { moreDue = true }
                case .recorded(let failed):
                    recording = false
                    if let failed {
                        // Kept, first in line, and written again after a pause (shorter while stopping, so
                        // that the last try still comes before recording's deadline).
                        finished.insert(contentsOf: failed, at: 0)
                        recordPaused = true
                        var pause = configuration.pollInterval
                        if let deadline = recordDeadline { pause = min(pause, max(.zero, deadline - .now)) }
                        group.addTask { [pause] in
                            try? await Task.sleep(for: pause)
                            return .recordResume
                        }
                        break
                    }
                    // A recorded delivery lets the next event of its request be claimed. What finished during the
                    // write waits `recordDelay` for more, as any batch does (the timer is set above): going at once,
                    // a fast receiver's outcomes were written a dozen at a time, one statement every 2 ms.
                    moreDue = true
                case .recordDue:
                    recordTimer = false
                    if !recording, !recordPaused, !finished.isEmpty { startRecord() }
                case .recordResume:
                    recordPaused = false
                case .cutPosts:
                    if posting > 0 {
                        logger.info("cutting webhook posts short as the server stops", metadata: ["webhook.posts": "\(posting)"])
                        // Fails the requests under way at once; each comes back as a failed attempt.
                        group.addTask {
                            try? await http.shutdown()
                            return .postsCut
                        }
                    }
                case .postsCut:
                    break
                case .released:
                    releasing -= 1
                case .tick:
                    ticking = false
                    moreDue = true
                case .probed(let latest):
                    probing = false
                    if let latest, latest > leftDue ?? .distantPast, !moreDue, !claiming, heldTotal == 0 {
                        moreDue = true
                        probedDue = latest
                    }
                case .watch:
                    watching = false
                case .spaced:
                    spacing = false
                case .stop, nil:
                    break
                }
            }
            // The poll timer and the shutdown watch are all that can be left.
            group.cancelAll()
        }
    }

    /// Posts one event; never throws (a failure is an attempt's outcome).
    private func deliver(_ event: WebhookDeliveryStore.ClaimedEvent, with http: HTTPClient) async -> WebhookDeliveryStore.Finished {
        let start = ContinuousClock.now
        var outcome = await post(event, with: http)
        let elapsed = ContinuousClock.now - start
        outcome.durationMs = Int(elapsed.inSeconds * 1000)
        if outcome.delivered {
            logger.debug("webhook delivered", metadata: metadata(event, outcome))
        } else {
            logger.info("webhook attempt failed", metadata: metadata(event, outcome).merging(["error": "\(outcome.error ?? "")"]) { $1 })
        }
        return WebhookDeliveryStore.Finished(
            event: event, outcome: outcome, retryDelay: configuration.retryDelay(afterAttempt: event.attempt))
    }

    private func metadata(_ event: WebhookDeliveryStore.ClaimedEvent, _ outcome: WebhookDeliveryStore.Outcome) -> Logger.Metadata {
        [
            "webhook.event.id": "\(event.id)", "webhook.event.type": "\(event.type)", "webhook.attempt": "\(event.attempt)",
            "account.id": "\(event.thirdPartyID)", "http.status": "\(outcome.statusCode.map(String.init) ?? "-")",
            "duration.ms": "\(outcome.durationMs)",
        ]
    }

    /// Records a batch of attempts in one statement, waiting at most `wait` for a connection; never
    /// throws. False when it failed: the loop keeps the batch and writes it again.
    private func record(_ batch: [WebhookDeliveryStore.Finished], waitingAtMost wait: Duration) async -> Bool {
        do {
            try await client.withConnection(waitingAtMost: wait) { connection in
                try await WebhookDeliveryStore.record(batch, horizon: configuration.retryHorizon, on: connection, logger: logger)
            }
            return true
        } catch {
            logger.warning(
                "recording webhook attempts failed; kept to be written again",
                metadata: ["webhook.attempts": "\(batch.count)", "error": "\(String(reflecting: error))"])
            return false
        }
    }

    /// The latest time at which a pending event became due, waiting at most `wait` for a connection; nil when
    /// none is due. A look that fails throws (and finds nothing: the next tick claims anyway).
    private func latestDue(waitingAtMost wait: Duration) async throws -> Date? {
        try await client.withConnection(waitingAtMost: wait) { connection in
            try await WebhookDeliveryStore.latestDue(on: connection, logger: logger)
        }
    }

    /// Gives claimed, unposted events back; never throws (if it fails, their leases run out instead).
    private func release(_ events: [WebhookDeliveryStore.ClaimedEvent]) async {
        do {
            try await client.withConnection { connection in
                try await WebhookDeliveryStore.release(events, on: connection, logger: logger)
            }
        } catch {
            logger.warning(
                "giving back claimed webhook events failed", metadata: ["webhook.events": "\(events.count)", "error": "\(String(reflecting: error))"])
        }
    }

    private func post(_ event: WebhookDeliveryStore.ClaimedEvent, with http: HTTPClient) async -> WebhookDeliveryStore.Outcome {
        func failure(_ why: String, status: Int? = nil) -> WebhookDeliveryStore.Outcome {
            WebhookDeliveryStore.Outcome(delivered: false, statusCode: status, error: why, durationMs: 0)
        }
        guard let url = event.url, let secret = event.secret else { return failure("no webhook is registered") }
        // Again at delivery, at most `urlRecheck` ago: the host may resolve elsewhere now than at registration.
        if case .failure(let rejection) = await urlChecks.verdict(on: url) { return failure("not sent: the url \(rejection.message)") }
        let body = Self.body(of: event)
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Data4Help-Webhooks/1")
        request.headers.add(name: WebhookSignature.eventIDHeaderName, value: event.id.uuidString.lowercased())
        request.headers.add(
            name: WebhookSignature.headerName,
            value: WebhookSignature.header(body: body, secret: secret, timestamp: Int(clock.now.timeIntervalSince1970)))
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await http.execute(
                request, deadline: .now() + Self.timeAmount(configuration.requestTimeout), logger: logger)
            // Read (and drop) a small answer, so the connection can carry the next delivery.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            let code = Int(response.status.code)
            if (200..<300).contains(code) {
                return WebhookDeliveryStore.Outcome(delivered: true, statusCode: code, error: nil, durationMs: 0)
            }
            let redirect = (300..<400).contains(code) ? " (redirects are not followed)" : ""
            return failure("the receiver answered \(code)\(redirect)", status: code)
        } catch {
            return failure(Self.describe(error))
        }
    }

    /// `{"id", "type", "createdAt", "data"}`; `data` is the stored JSON, copied as it is.
    static func body(of event: WebhookDeliveryStore.ClaimedEvent) -> [UInt8] {
        let type = JSONStringLiteral.of(event.type)
        let text =
            #"{"id":"\#(event.id.uuidString.lowercased())","type":\#(type),"createdAt":"\#(Timestamp.rfc3339(event.createdAt))","data":\#(event.data)}"#
        return Array(text.utf8)
    }

    /// A short reason for an attempt's record; it never contains the body or the secret.
    static func describe(_ error: any Error) -> String {
        if let client = error as? HTTPClientError {
            switch client {
            case .deadlineExceeded, .readTimeout, .writeTimeout: return "timed out"
            case .connectTimeout: return "timed out connecting"
            case .remoteConnectionClosed: return "the receiver closed the connection"
            case .cancelled, .alreadyShutdown: return "cut short: the server was stopping"
            default: return "HTTP error: \(client)"
            }
        }
        return "could not deliver: \(error)"
    }

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(Int64(duration.inSeconds * 1_000_000_000))
    }
}
