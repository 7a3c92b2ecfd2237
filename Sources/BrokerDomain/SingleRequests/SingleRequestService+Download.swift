import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

extension SingleRequestService {
    /// Checks a download of samples before anything is sent: the caller sent the request, it is accepted,
    /// the cursor is one this API gave out, and at least one requested sample type has data. Fixes the
    /// release bound.
    package func prepareDownload(id: UUID, cursor cursorText: String?, by principal: Principal, logger: Logger) async throws -> DownloadPlan {
        try await plan(id: id, cursor: cursorText, by: principal, logger: logger) { request, userID, arrived, connection in
            // The bound, and so the next cursor, is the last sample this request releases, not the last that
            // arrived: otherwise uploads it does not release (other types, outside the window) would move
            // the cursor and tell the company that the person uploaded them.
            let bound = try await SingleRequestStore.lastReleasedArrival(
                userID: userID, types: request.types.sampleTypes, from: request.windowFrom, to: request.windowTo, upTo: arrived,
                on: connection, logger: logger)
            let available = try await SingleRequestStore.availableTypes(
                userID: userID, types: request.types.sampleTypes, from: request.windowFrom, to: request.windowTo, bound: bound,
                on: connection, logger: logger)
            guard !available.isEmpty else { throw SingleRequestError.noRequestedData }
            return (bound, available)
        }
    }

    /// The checks every download shares; `release` fixes the bound of what this one releases (and the
    /// sample types with data), given the request, its person and the highest arrival it may release.
    func plan(
        id: UUID, cursor cursorText: String?, kind: DownloadCursor.Kind = .samples, by principal: Principal, logger: Logger,
        release: @Sendable (SingleRequest, UUID, Int64, PostgresConnection) async throws -> (bound: Int64, available: [SampleType])
    ) async throws -> DownloadPlan {
        guard principal.role == .thirdParty else { throw WrongRole("Only the sender downloads a request's data.") }
        let key = try await cursorKey.key(logger: logger)
        var cursor: Int64 = 0
        if let cursorText {
            guard let parsed = DownloadCursor.open(cursorText, request: id, kind: kind, key: key) else {
                throw SingleRequestError.invalid([FieldError(field: "cursor", message: "is not a cursor this API gave out")])
            }
            cursor = parsed
        }
        return try await client.withConnection { connection in
            guard
                let (request, arrived) = try await SingleRequestStore.releaseBound(
                    requestID: id, sender: principal.accountID, on: connection, logger: logger)
            else { throw SingleRequestError.notFound }
            guard request.status == .accepted else { throw SingleRequestError.notAccepted }
            guard let userID = request.userID else { throw SingleRequestError.noRequestedData }
            let (bound, available) = try await release(request, userID, arrived, connection)
            return DownloadPlan(
                request: request, userID: userID, cursor: cursor, bound: bound, availableTypes: available,
                nextCursor: DownloadCursor.seal(max(cursor, bound), request: id, kind: kind, key: key),
                subject: try await receipts.pseudonyms.pseudonym(of: userID, in: request.id, on: connection, logger: logger),
                primaryPosition: try await reads.planPosition(on: connection, logger: logger))
        }
    }

    /// Streams the planned release of samples to `send` in chunks, then records it (audit event with the
    /// row count, the person's access log). `send` answers false once the receiver is gone (hung up, or
    /// stopped reading for longer than the server's idle timeout): what was sent so far is still recorded.
    package func streamDownload(
        _ plan: DownloadPlan, format: DownloadFormat, logger: Logger,
        send: @Sendable ([UInt8]) async -> Bool
    ) async throws {
        switch format {
        case .json: try await streamSamples(plan, encoder: ReleasedSampleEncoder(format: .json), logger: logger, send: send)
        case .csv: try await streamSamples(plan, encoder: ReleasedSampleEncoder(format: .csv), logger: logger, send: send)
        case .fhirBundle: try await streamSamples(plan, encoder: observationEncoder(for: plan, form: .bundle), logger: logger, send: send)
        case .fhirNDJSON: try await streamSamples(plan, encoder: observationEncoder(for: plan, form: .ndjson), logger: logger, send: send)
        }
    }

    /// FHIR Observations name the person by the plan's pseudonym, as the request's receipts and Consent do;
    /// their ids start with the request's id, so two requests' Observations never share one.
    private func observationEncoder(for plan: DownloadPlan, form: FHIRObservationEncoder.Form) -> FHIRObservationEncoder {
        let id = plan.request.id.uuidString.lowercased()
        return FHIRObservationEncoder(
            form: form, subject: .requestPseudonym(request: plan.request.id, pseudonym: plan.subject),
            idPrefix: id.replacingOccurrences(of: "-", with: ""), timestamp: clock.now,
            nextLink: "/v1/single-requests/\(id)/data?format=fhir&cursor=")
    }

    private func streamSamples<Encoder: ReleaseEncoder>(
        _ plan: DownloadPlan, encoder: Encoder, logger: Logger, send: @Sendable ([UInt8]) async -> Bool
    ) async throws where Encoder.Chunk == ReleasedChunk {
        try await streamRelease(
            // Recorded as a release of the granted types that had data to release (none the person unshared).
            plan, of: plan.availableTypes.map(RequestedType.sample), encoder: encoder, logger: logger,
            read: { plan, arrival, connection in
                try await SingleRequestStore.releasedChunk(plan, after: arrival, limit: Self.chunkRows, on: connection, logger: logger)
            },
            revision: { plan, connection in
                try await SampleRevisionStore.dataRevision(of: plan.userID, on: connection, logger: logger)
            }, send: send)
    }

    /// Streams a planned release, chunk after chunk, through `encoder`, and records what the socket took
    /// as a release of `types`.
    ///
    /// No connection is held while a chunk waits for the socket: each chunk is read on a lease of its own
    /// (the next one while the current one is sent), so a slow or stalled client costs the pool nothing,
    /// and twenty of them cannot take all of it. Chunks are read by arrival up to the bound fixed when the
    /// download was planned, so they follow on from each other without one transaction around them all.
    ///
    /// A chunk read ahead may be sent long after it was read (a slow client). `revision` is the person's data
    /// revision, which a correction or a change of sharing preferences moves: it is read before each chunk
    /// (so a chunk is never older than its revision) and again just before a chunk read ahead is sent, and a
    /// chunk whose person's data changed meanwhile is read again. So nothing a correction or a preference
    /// removed is sent once it committed, but for the rows of the chunk already going out.
    ///
    /// With a standby configured (issue 34), a chunk is read there once it has replayed the primary's position
    /// at the plan (so no row up to the bound is missing), else on the primary. A standby may not have replayed
    /// a correction committed since the plan, so a chunk read there is checked like one read ahead: its
    /// revision against the primary's before it is sent, and read again on the primary if they differ.
    func streamRelease<Encoder: ReleaseEncoder>(
        _ plan: DownloadPlan, of types: [RequestedType], encoder: Encoder, logger: Logger,
        read: @escaping @Sendable (DownloadPlan, Int64, PostgresConnection) async throws -> Encoder.Chunk?,
        revision: (@Sendable (DownloadPlan, PostgresConnection) async throws -> Int64)? = nil,
        send: @Sendable ([UInt8]) async -> Bool
    ) async throws {
        let client = client
        let reads = reads
        /// A chunk, with the data revision read just before it, and whether it was read on a standby. A chunk
        /// whose read failed because the database went away (a failover, issue 34) is read again, for at most
        /// `chunkOutageBound`: the response is already under way, and its only other answer is to break off.
        @Sendable func chunk(after arrival: Int64, standbyAllowed: Bool = true) async throws -> Chunk<Encoder.Chunk> {
            let deadline = ContinuousClock.now + Self.chunkOutageBound
            while true {
                do {
                    let (value, onStandby) = try await reads.read(
                        replayedPast: standbyAllowed ? plan.primaryPosition : nil, logger: logger
                    ) { connection in
                        let revisionBefore = try await revision?(plan, connection)
                        return (try await read(plan, arrival, connection), revisionBefore)
                    }
                    return Chunk(rows: value.0, revision: value.1, onStandby: onStandby)
                } catch  where ContinuousClock.now < deadline && Self.outlastsOutage(error) {
                    logger.warning(
                        "reading a download's chunk failed; trying again",
                        metadata: ["request.id": "\(plan.request.id)", "error": "\(String(reflecting: error))"])
                    try await Task.sleep(for: .milliseconds(500))
                }
            }
        }
        @Sendable func unchanged(since readAt: Int64?) async throws -> Bool {
            guard let revision, let readAt else { return true }
            return try await client.withConnection { connection in try await revision(plan, connection) } == readAt
        }
        var encoder = encoder
        // Counted once the socket took them: what the audit event and the access log say was released.
        var released: Int64 = 0
        var inChunk: Int64 = 0
        var receiverGone = false
        var after = plan.cursor
        let start = after
        var next = Task { try await chunk(after: start) }
        var readAhead = false
        do {
            reading: while true {
                var read = try await next.value
                // A chunk read ahead, or on a standby (which may not have replayed a correction committed on the
                // primary since the plan), is sent only if the person's data has not changed since on the
                // primary; otherwise it is read again there.
                if readAhead || read.onStandby, try await !unchanged(since: read.revision) {
                    read = try await chunk(after: after, standbyAllowed: false)
                }
                guard let current = read.rows else { break reading }
                after = current.lastArrival
                let following = after
                next = Task { try await chunk(after: following) }
                readAhead = true
                encoder.begin(current)
                for row in 0..<current.count {
                    inChunk += Int64(encoder.append(current, row: row))
                    if encoder.isChunkFull {
                        guard await send(encoder.takeChunk()) else {
                            receiverGone = true
                            break reading
                        }
                        released += inChunk
                        inChunk = 0
                    }
                }
            }
            _ = try? await next.value  // its lease ends before the release is recorded
            if !receiverGone {
                encoder.finish(availableTypes: plan.availableTypes, nextCursor: plan.nextCursor)
                receiverGone = await !send(encoder.takeChunk())
                if !receiverGone { released += inChunk }
            }
        } catch {
            // A chunk could not be read (the database went away, or was too busy): what was sent is recorded.
            _ = try? await next.value
            try? await record(plan, of: types, rows: released, complete: false, logger: logger)
            throw error
        }
        try await record(plan, of: types, rows: released, complete: !receiverGone, logger: logger)
    }

    /// Records a release in a transaction of its own. It runs in a task of its own because the stream's
    /// task is cancelled when the client hangs up, and a cancelled task gets no connection: the record of
    /// what was sent must not depend on whether the receiver stayed.
    ///
    /// Data already went out, so the record is not given up lightly: it waits for a connection longer than a
    /// request would, and a transaction lost with its connection (the primary lost in a failover, issue 34)
    /// is tried again, once a second, within the same 120 s. A commit whose answer was lost with the
    /// connection may then be recorded twice: a release shown twice, never one not shown.
    private func record(_ plan: DownloadPlan, of types: [RequestedType], rows: Int64, complete: Bool, logger: Logger) async throws {
        let client = client
        do {
            try await Task {
                let deadline = ContinuousClock.now + .seconds(120)
                while true {
                    do {
                        try await client.withTransaction(logger: logger, waitingAtMost: max(.seconds(1), deadline - .now)) { connection in
                            try await recordRelease(plan, of: types, rows: rows, complete: complete, on: connection, logger: logger)
                        }
                        return
                    } catch
                        where ContinuousClock.now < deadline && PostgresErrors.psqlError(in: error) != nil && !PostgresErrors.isPoolShutDown(error)
                        && (PostgresErrors.isConnectionFailure(error) || PostgresErrors.isReadOnlyServer(error))
                    {
                        // The server's error (the connection lost, a demoted primary), not the pool's: a pool shut
                        // down does not come back (it stops only once its leases in flight, this one's included,
                        // have ended, or after its drain bound), and a lease queued on a retired client moves by
                        // itself.
                        logger.warning(
                            "recording a sent download failed; trying again",
                            metadata: ["request.id": "\(plan.request.id)", "error": "\(String(reflecting: error))"])
                        try await Task.sleep(for: .seconds(1))
                    }
                }
            }.value
        } catch {
            logger.error(
                "a download was sent but could not be recorded",
                metadata: ["request.id": "\(plan.request.id)", "rows": "\(rows)", "error": "\(String(reflecting: error))"])
            throw error
        }
    }

    /// Samples fetched per query while streaming a download.
    static let chunkRows = 10_000

    /// How long a download under way waits for its database to come back (a failover takes 8–13 s here,
    /// `make faults FAULTS_ONLY=failover`) before it breaks off.
    static let chunkOutageBound = Duration.seconds(20)

    /// Whether a chunk's failed read may succeed on a later try: the connection or the primary was lost, or
    /// no connection came in time while the pool waits for a host, and the server is not stopping (a pool
    /// shut down does not come back).
    static func outlastsOutage(_ error: any Error) -> Bool {
        guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return false }
        guard !PostgresErrors.isPoolShutDown(error) else { return false }
        return PostgresErrors.isConnectionFailure(error) || PostgresErrors.isReadOnlyServer(error) || error is DatabaseBusy
    }

    /// One chunk of a release as `streamRelease` read it.
    private struct Chunk<Rows: Sendable>: Sendable {
        var rows: Rows?
        /// The person's data revision read on the same server just before `rows` (nil: the release has none).
        var revision: Int64?
        var onStandby: Bool
    }

    private func recordRelease(
        _ plan: DownloadPlan, of types: [RequestedType], rows: Int64, complete: Bool, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await audit(
            AuditAction.singleRequestDataReleased, plan.request, actor: .thirdParty,
            details: [
                "rows": .int(Int(rows)), "types": .string(types.map(\.rawValue).joined(separator: ",")),
                "afterArrival": .int(Int(plan.cursor)), "upToArrival": .int(Int(plan.bound)), "complete": .bool(complete),
                "grantId": .string(plan.request.grant?.id.uuidString.lowercased() ?? ""),
            ],
            on: connection, logger: logger)
        guard rows > 0 else { return }
        try await AccessLogStore.record(
            userID: plan.userID, thirdPartyID: plan.request.thirdParty.id, requestID: plan.request.id, grantID: plan.request.grant?.id,
            kind: .single, types: types, samples: rows, on: connection, logger: logger)
        try await mailFirstDownload(plan, on: connection, logger: logger)
    }
}
