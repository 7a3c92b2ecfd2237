import Foundation
import Logging
import PostgresNIO

/// The SQL of runs and their runners (`0017_runs.sql`, `0018_run_bibs.sql`, `0020_privacy_zone_disguise.sql`).
package enum RunStore {
    static let selection = """
        SELECT r.id, r.organiser_id, coalesce(t.company_name, 'Erased company'), r.name, r.starts_at, r.duration_minutes,
               r.max_participants, r.path_latitudes, r.path_longitudes, r.path_metres, r.cancelled_at, r.created_at,
               (SELECT count(*) FROM run_participants p WHERE p.run_id = r.id AND p.removed_at IS NULL)
        FROM runs r LEFT JOIN third_parties t ON t.account_id = r.organiser_id
        """

    static func run(from row: PostgresRow) throws -> Run {
        let (id, organiser, company, name, startsAt, duration, maximum, latitudes, longitudes, metres, cancelled, created, participants) =
            try row.decode((UUID, UUID, String, String, Date, Int, Int, [Double], [Double], Double, Date?, Date, Int).self)
        return Run(
            id: id, organiserID: organiser, organiserName: company, name: name, startsAt: startsAt, durationMinutes: duration,
            maxParticipants: maximum,
            path: RunPath(points: zip(latitudes, longitudes).map { GeoPoint(latitude: $0, longitude: $1) }),
            pathMetres: metres, cancelledAt: cancelled, createdAt: created, participants: participants)
    }

    static func insert(
        organiserID: UUID, name: String, startsAt: Date, durationMinutes: Int, maxParticipants: Int, path: RunPath,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> Run {
        let rows = try await connection.query(
            """
            INSERT INTO runs (organiser_id, name, starts_at, duration_minutes, max_participants, path_latitudes, path_longitudes, path_metres)
            VALUES (\(organiserID), \(name), \(Timestamp.postgresText(startsAt))::timestamptz, \(durationMinutes), \(maxParticipants),
                    \(path.points.map(\.latitude)), \(path.points.map(\.longitude)), \(path.metres))
            RETURNING id
            """, logger: logger)
        guard let id = try await rows.collect().first?.decode(UUID.self),
            let run = try await run(id: id, on: connection, logger: logger)
        else { throw AccountStoreError.noRow }
        return run
    }

    /// The run; `locked` holds its row until the transaction ends (joins and edits are serialised by it).
    static func run(id: UUID, locked: Bool = false, on connection: PostgresConnection, logger: Logger) async throws -> Run? {
        if locked { try await connection.query("SELECT 1 FROM runs WHERE id = \(id) FOR UPDATE", logger: logger) }
        let rows = try await connection.query("\(unescaped: selection) WHERE r.id = \(id)", logger: logger)
        return try await rows.collect().first.map(run(from:))
    }

    /// A page of runs in `state` at the database's `now()`: upcoming and live ones soonest first, finished
    /// and cancelled ones latest first, after `cursor` (the last one's start and id).
    static func list(state: Run.State, after cursor: PageKey?, limit: Int, on connection: PostgresConnection, logger: Logger)
        async throws -> [Run]
    {
        let after = cursor.map { Timestamp.postgresText($0.time) }
        let condition: String
        let ascending: Bool
        switch state {
        case .upcoming: (condition, ascending) = ("r.cancelled_at IS NULL AND r.starts_at > now()", true)
        case .live:
            (condition, ascending) = (
                "r.cancelled_at IS NULL AND r.starts_at <= now() AND r.starts_at + make_interval(mins => r.duration_minutes) > now()", true
            )
        case .finished:
            (condition, ascending) = ("r.cancelled_at IS NULL AND r.starts_at + make_interval(mins => r.duration_minutes) <= now()", false)
        case .cancelled: (condition, ascending) = ("r.cancelled_at IS NOT NULL", false)
        }
        let order = ascending ? "ASC" : "DESC"
        let comparison = ascending ? ">" : "<"
        let rows = try await connection.query(
            """
            \(unescaped: selection)
            WHERE \(unescaped: condition)
              AND (\(after)::timestamptz IS NULL OR (r.starts_at, r.id) \(unescaped: comparison) (\(after)::timestamptz, \(cursor?.id)))
            ORDER BY r.starts_at \(unescaped: order), r.id \(unescaped: order)
            LIMIT \(limit + 1)
            """, logger: logger)
        return try await rows.collect().map(run(from:))
    }

    static func update(_ run: Run, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE runs SET name = \(run.name), starts_at = \(Timestamp.postgresText(run.startsAt))::timestamptz,
                duration_minutes = \(run.durationMinutes), max_participants = \(run.maxParticipants),
                path_latitudes = \(run.path.points.map(\.latitude)), path_longitudes = \(run.path.points.map(\.longitude)),
                path_metres = \(run.path.metres)
            WHERE id = \(run.id)
            """, logger: logger)
    }

    static func cancel(id: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("UPDATE runs SET cancelled_at = now() WHERE id = \(id) AND cancelled_at IS NULL", logger: logger)
    }

    // MARK: Runners

    static let participantSelection = """
        SELECT p.run_id, p.user_id, p.bib, p.display_name, p.joined_at, p.request_id,
               (CASE WHEN q.status = 'pending' AND q.expires_at <= now() THEN 'expired' ELSE q.status END),
               p.checked_in_at, p.removed_at, p.finished_at,
               coalesce(q.status = 'accepted' AND q.ended_at IS NULL AND q.ends_at > now(), false),
               \(zoneColumns)
        FROM run_participants p LEFT JOIN single_requests q ON q.id = p.request_id \(zoneJoin)
        """

    /// A privacy zone's columns (`0017_runs.sql`), then its disguise's (`0020_privacy_zone_disguise.sql`,
    /// joined by `zoneJoin`), as `zone(from:at:)` reads them.
    static let zoneColumns = "p.zone_latitude, p.zone_longitude, p.zone_metres, \(disguiseColumns)"
    static let zoneJoin = "LEFT JOIN privacy_zone_disguises z ON z.id = p.zone_disguise_id"
    static let disguiseColumns =
        "z.id, z.home_latitude, z.home_longitude, z.home_metres, z.centre_latitude, z.centre_longitude, z.radius_m, z.band_m, z.phases"

    /// The zone in the row's `zoneColumns` from `first` on; nil when the runner has none.
    static func zone(from columns: PostgresRandomAccessRow, at first: Int) throws -> PrivacyZone? {
        guard let latitude = try columns[first].decode(Double?.self), let longitude = try columns[first + 1].decode(Double?.self),
            let metres = try columns[first + 2].decode(Int?.self), let disguise = try disguise(from: columns, at: first + 3)
        else { return nil }
        return PrivacyZone(centre: GeoPoint(latitude: latitude, longitude: longitude), metres: metres, disguise: disguise)
    }

    /// The disguise in the row's `disguiseColumns` from `first` on; nil when there is none.
    static func disguise(from columns: PostgresRandomAccessRow, at first: Int) throws -> PrivacyZone.Disguise? {
        guard let id = try columns[first].decode(UUID?.self) else { return nil }
        return PrivacyZone.Disguise(
            id: id, home: GeoPoint(latitude: try columns[first + 1].decode(Double.self), longitude: try columns[first + 2].decode(Double.self)),
            metres: try columns[first + 3].decode(Int.self),
            centre: GeoPoint(latitude: try columns[first + 4].decode(Double.self), longitude: try columns[first + 5].decode(Double.self)),
            radius: try columns[first + 6].decode(Double.self), band: try columns[first + 7].decode(Double.self),
            phases: try columns[first + 8].decode([Double].self))
    }

    static func participant(from row: PostgresRow) throws -> RunParticipant {
        let columns = row.makeRandomAccess()
        return RunParticipant(
            runID: try columns[0].decode(UUID.self), userID: try columns[1].decode(UUID.self), bib: try columns[2].decode(Int.self),
            displayName: try columns[3].decode(String?.self), joinedAt: try columns[4].decode(Date.self),
            requestID: try columns[5].decode(UUID?.self),
            requestStatus: try columns[6].decode(String?.self).flatMap(SingleRequest.Status.init(rawValue:)),
            checkedInAt: try columns[7].decode(Date?.self), removedAt: try columns[8].decode(Date?.self),
            finishedAt: try columns[9].decode(Date?.self), privacyZone: try zone(from: columns, at: 11), sharing: try columns[10].decode(Bool.self))
    }

    static func participant(run runID: UUID, user userID: UUID, on connection: PostgresConnection, logger: Logger) async throws
        -> RunParticipant?
    {
        let rows = try await connection.query(
            "\(unescaped: participantSelection) WHERE p.run_id = \(runID) AND p.user_id = \(userID)", logger: logger)
        return try await rows.collect().first.map(participant(from:))
    }

    /// Every runner of the run, by bib.
    static func participants(run runID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> [RunParticipant] {
        let rows = try await connection.query("\(unescaped: participantSelection) WHERE p.run_id = \(runID) ORDER BY p.bib", logger: logger)
        return try await rows.collect().map(participant(from:))
    }

    /// The runs the person joined, latest start first.
    static func participations(of userID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> [(Run, RunParticipant)] {
        let places = try await connection.query(
            "\(unescaped: participantSelection) WHERE p.user_id = \(userID)", logger: logger
        ).collect().map(participant(from:))
        // The runs in one query, not one per place.
        let runs = try await connection.query(
            "\(unescaped: selection) WHERE r.id = ANY(\(places.map(\.runID)))", logger: logger
        ).collect().map(run(from:))
        let byID = Dictionary(uniqueKeysWithValues: runs.map { ($0.id, $0) })
        return places.compactMap { place in byID[place.runID].map { ($0, place) } }.sorted { $0.0.startsAt > $1.0.startsAt }
    }

    /// Adds the runner with the next bib and returns it; the caller holds the run's row lock.
    static func join(run runID: UUID, user userID: UUID, displayName: String?, on connection: PostgresConnection, logger: Logger) async throws
        -> Int
    {
        try await connection.query(
            """
            WITH issued AS (UPDATE runs SET bibs_issued = bibs_issued + 1 WHERE id = \(runID) RETURNING bibs_issued)
            INSERT INTO run_participants (run_id, user_id, bib, display_name)
            SELECT \(runID), \(userID), bibs_issued, \(displayName) FROM issued
            RETURNING bib
            """, logger: logger
        ).collect().first?.decode(Int.self) ?? 0
    }

    static func leave(run runID: UUID, user userID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("DELETE FROM run_participants WHERE run_id = \(runID) AND user_id = \(userID)", logger: logger)
    }

    /// Forgets the run's requests and check-ins (the run moved: new requests go out for the new time).
    static func forgetRequests(run runID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "UPDATE run_participants SET request_id = NULL, checked_in_at = NULL WHERE run_id = \(runID)", logger: logger)
    }

    /// Where to tell the run's runners of a change.
    static func runnerIDs(run runID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> [UUID] {
        let rows = try await connection.query(
            "SELECT p.user_id FROM run_participants p WHERE p.run_id = \(runID) ORDER BY p.bib", logger: logger)
        return try await rows.collect().map { try $0.decode(UUID.self) }
    }

    static func setRequest(_ requestID: UUID, run runID: UUID, user userID: UUID, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        try await connection.query(
            "UPDATE run_participants SET request_id = \(requestID) WHERE run_id = \(runID) AND user_id = \(userID)", logger: logger)
    }

    static func checkIn(run runID: UUID, user userID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE run_participants SET checked_in_at = coalesce(checked_in_at, now())
            WHERE run_id = \(runID) AND user_id = \(userID) AND removed_at IS NULL
            """, logger: logger)
    }

    /// Sets the runner's zone in the run (its disguise stored first: `saveDisguise`), or removes it with nil;
    /// the disguise stays with the person.
    static func setPrivacyZone(_ zone: PrivacyZone?, run runID: UUID, user userID: UUID, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        try await connection.query(
            """
            UPDATE run_participants SET zone_latitude = \(zone?.centre.latitude), zone_longitude = \(zone?.centre.longitude),
                zone_metres = \(zone?.metres), zone_disguise_id = \(zone?.disguise.id)
            WHERE run_id = \(runID) AND user_id = \(userID)
            """, logger: logger)
    }

    /// Serialises, until the transaction ends, everything that picks or changes the person's disguises: two
    /// zones set at once (in two runs, say) must not each draw one around the same home.
    static func lockDisguises(of userID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtext('data4help.privacy_zone_disguise'), hashtext(\(userID)::text))", logger: logger
        ).collect()
    }

    /// The person's disguises, one per home (`PrivacyZone.Disguise`), kept whether or not a zone uses them.
    static func disguises(of userID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> [PrivacyZone.Disguise] {
        let rows = try await connection.query(
            "SELECT \(unescaped: disguiseColumns) FROM privacy_zone_disguises z WHERE z.user_id = \(userID)", logger: logger)
        return try await rows.collect().compactMap { try disguise(from: $0.makeRandomAccess(), at: 0) }
    }

    /// Stores a new disguise (without an `id`) or a reused one's grown radius; returns it with its `id`.
    static func saveDisguise(_ disguise: PrivacyZone.Disguise, of userID: UUID, on connection: PostgresConnection, logger: Logger) async throws
        -> PrivacyZone.Disguise
    {
        var saved = disguise
        if let id = disguise.id {
            try await connection.query(
                """
                UPDATE privacy_zone_disguises SET radius_m = \(disguise.radius), home_metres = \(disguise.metres)
                WHERE id = \(id) AND user_id = \(userID)
                """, logger: logger)
        } else {
            let rows = try await connection.query(
                """
                INSERT INTO privacy_zone_disguises (user_id, home_latitude, home_longitude, home_metres, centre_latitude, centre_longitude,
                                                    radius_m, band_m, phases)
                VALUES (\(userID), \(disguise.home.latitude), \(disguise.home.longitude), \(disguise.metres), \(disguise.centre.latitude),
                        \(disguise.centre.longitude), \(disguise.radius), \(disguise.band), \(disguise.phases))
                RETURNING id
                """, logger: logger)
            for try await id in rows.decode(UUID.self) { saved.id = id }
        }
        return saved
    }

    /// The person's latest position uploaded in the last `seconds`.
    static func freshPosition(of userID: UUID, within seconds: TimeInterval, on connection: PostgresConnection, logger: Logger) async throws
        -> GeoPoint?
    {
        // By arrival (what was uploaded lately), among the fixes taken lately: an old track uploaded now is not where they are.
        let rows = try await connection.query(
            """
            SELECT latitude, longitude FROM positions
            WHERE user_id = \(userID) AND at > now() - make_interval(secs => \(seconds)) AND at <= now() + interval '1 minute'
            ORDER BY at DESC LIMIT 1
            """, logger: logger)
        return try await rows.collect().first.map { row in
            let (latitude, longitude) = try row.decode((Double, Double).self)
            return GeoPoint(latitude: latitude, longitude: longitude)
        }
    }

    // MARK: The run's day

    /// Runners of runs starting within `lead` seconds (not cancelled, not started) who have no request yet,
    /// with their email: to be sent the run's request.
    static func runnersAwaitingRequests(
        lead: TimeInterval, only joiner: (run: UUID, user: UUID)?, limit: Int, on connection: PostgresConnection, logger: Logger
    ) async throws -> [(run: UUID, user: UUID)] {
        let rows = try await connection.query(
            """
            SELECT p.run_id, p.user_id FROM run_participants p
            JOIN runs r ON r.id = p.run_id
            WHERE p.request_id IS NULL AND p.removed_at IS NULL AND r.cancelled_at IS NULL
              AND r.starts_at > now() AND r.starts_at <= now() + make_interval(secs => \(lead))
              AND (\(joiner?.run)::uuid IS NULL OR (p.run_id = \(joiner?.run) AND p.user_id = \(joiner?.user)))
            ORDER BY r.starts_at
            LIMIT \(limit)
            """, logger: logger)
        return try await rows.collect().map { try $0.decode((UUID, UUID).self) }.map { (run: $0.0, user: $0.1) }
    }

    /// Removes the runners of started runs who had not checked in (R48); returns them with their requests (to withdraw).
    static func removeAbsentees(on connection: PostgresConnection, logger: Logger) async throws
        -> [(run: UUID, organiser: UUID, bib: Int, request: UUID?)]
    {
        let rows = try await connection.query(
            """
            UPDATE run_participants p SET removed_at = now()
            FROM runs r
            WHERE r.id = p.run_id AND r.cancelled_at IS NULL AND r.starts_at <= now() AND p.checked_in_at IS NULL AND p.removed_at IS NULL
            RETURNING r.id, r.organiser_id, p.bib, p.request_id
            """, logger: logger)
        return try await rows.collect().map { try $0.decode((UUID, UUID, Int, UUID?).self) }.map {
            (run: $0.0, organiser: $0.1, bib: $0.2, request: $0.3)
        }
    }

    /// Requests of runs that ended (or were cancelled) whose subscriptions or pending state outlive them.
    static func requestsOutlivingTheirRun(limit: Int, on connection: PostgresConnection, logger: Logger) async throws
        -> [(organiser: UUID, request: UUID)]
    {
        let rows = try await connection.query(
            """
            SELECT r.organiser_id, q.id FROM run_participants p
            JOIN runs r ON r.id = p.run_id JOIN single_requests q ON q.id = p.request_id
            -- Ten minutes after the end (the grace `newProgress` gives a phone's last uploads), or at once if cancelled.
            WHERE (r.cancelled_at IS NOT NULL OR r.starts_at + make_interval(mins => r.duration_minutes) + interval '10 minutes' <= now())
              AND ((q.status = 'pending' AND q.expires_at > now())
                   OR (q.status = 'accepted' AND q.ended_at IS NULL AND q.ends_at > now()))
            LIMIT \(limit)
            """, logger: logger)
        return try await rows.collect().map { try $0.decode((UUID, UUID).self) }.map { (organiser: $0.0, request: $0.1) }
    }

    // MARK: Progress

    /// Checked-in runners of live runs whose request is accepted and still running, with their positions
    /// uploaded since last looked at (taken during the run): what finish detection reads.
    static func newProgress(limit: Int, on connection: PostgresConnection, logger: Logger) async throws
        -> [RunnerProgress]
    {
        let rows = try await connection.query(
            """
            SELECT p.run_id, p.user_id, p.halfway_at, array_agg(x.at ORDER BY x.at), array_agg(x.latitude ORDER BY x.at),
                   array_agg(x.longitude ORDER BY x.at), max(x.arrival)
            FROM run_participants p
            JOIN runs r ON r.id = p.run_id
            JOIN single_requests q ON q.id = p.request_id
            JOIN positions x ON x.user_id = p.user_id AND x.arrival > p.seen_arrival
                AND x.at >= r.starts_at AND x.at < r.starts_at + make_interval(mins => r.duration_minutes) AND x.at <= now()
            WHERE r.cancelled_at IS NULL AND r.starts_at <= now() AND r.starts_at + make_interval(mins => r.duration_minutes) + interval '10 minutes' > now()
              AND p.checked_in_at IS NOT NULL AND p.removed_at IS NULL AND p.finished_at IS NULL
              AND q.status = 'accepted' AND q.ended_at IS NULL AND q.ends_at > now()
            GROUP BY p.run_id, p.user_id, p.halfway_at
            LIMIT \(limit)
            """, logger: logger)
        return try await rows.collect().map { row in
            let (run, user, halfway, times, latitudes, longitudes, last) =
                try row.decode((UUID, UUID, Date?, [Date], [Double], [Double], Int64).self)
            return RunnerProgress(
                run: run, user: user, halfwayAt: halfway,
                fixes: times.indices.map { (at: times[$0], point: GeoPoint(latitude: latitudes[$0], longitude: longitudes[$0])) },
                lastArrival: last)
        }
    }

    /// Records how far the runner got; returns their bib and the run's organiser and start when this finished them.
    static func recordProgress(
        run runID: UUID, user userID: UUID, seenArrival: Int64, halfwayAt: Date?, finishedAt: Date?, on connection: PostgresConnection,
        logger: Logger
    ) async throws -> (bib: Int, organiser: UUID, startsAt: Date)? {
        try await connection.query(
            """
            WITH before AS (SELECT finished_at FROM run_participants WHERE run_id = \(runID) AND user_id = \(userID) FOR UPDATE)
            UPDATE run_participants p SET seen_arrival = greatest(seen_arrival, \(seenArrival)),
                halfway_at = coalesce(halfway_at, \(halfwayAt.map(Timestamp.postgresText))::timestamptz),
                finished_at = coalesce(finished_at, \(finishedAt.map(Timestamp.postgresText))::timestamptz)
            FROM runs r
            WHERE p.run_id = \(runID) AND p.user_id = \(userID) AND r.id = p.run_id
            RETURNING p.bib, r.organiser_id, r.starts_at, (SELECT finished_at FROM before) IS NULL AND p.finished_at IS NOT NULL
            """, logger: logger
        ).collect().first.flatMap { row in
            let (bib, organiser, startsAt, newlyFinished) = try row.decode((Int, UUID, Date, Bool).self)
            return newlyFinished ? (bib, organiser, startsAt) : nil
        }
    }
}

extension RunStore {
    /// Each runner spectators may see now (R49–R51): checked in, not removed, their run request accepted and
    /// not ended, with their latest position taken during the run, and their privacy zone, which the caller
    /// applies (`RunService.live`). `during` is the run's time as the caller read it: the same bounds as
    /// the run's row, given as values (a second wider, for the rounding of dates) so that the planner
    /// reads only the month partitions of `positions` the run covers instead of preparing every one for
    /// each runner; the row's exact bounds still decide.
    static func liveRunners(run runID: UUID, during: ClosedRange<Date>, on connection: PostgresConnection, logger: Logger) async throws
        -> [(runner: LiveRunner, zone: PrivacyZone?)]
    {
        let (from, to) = (during.lowerBound.addingTimeInterval(-1), during.upperBound.addingTimeInterval(1))
        let rows = try await connection.query(
            """
            SELECT p.bib, p.display_name, p.finished_at IS NOT NULL, x.at, x.latitude, x.longitude, \(unescaped: zoneColumns)
            FROM run_participants p
            JOIN runs r ON r.id = p.run_id
            JOIN single_requests q ON q.id = p.request_id
            \(unescaped: zoneJoin)
            CROSS JOIN LATERAL (
                SELECT at, latitude, longitude FROM positions
                WHERE user_id = p.user_id AND at >= r.starts_at
                  AND at <= least(now(), r.starts_at + make_interval(mins => r.duration_minutes))
                  AND at >= \(from) AND at <= \(to)
                  -- Only what the runner consented to: inside their request's window.
                  AND (q.window_from IS NULL OR at >= q.window_from) AND (q.window_to IS NULL OR at <= q.window_to)
                ORDER BY at DESC LIMIT 1
            ) x
            WHERE p.run_id = \(runID) AND p.checked_in_at IS NOT NULL AND p.removed_at IS NULL
              AND q.status = 'accepted' AND q.ended_at IS NULL AND q.ends_at > now()
            ORDER BY p.bib
            """, logger: logger)
        return try await rows.collect().map { row in
            let columns = row.makeRandomAccess()
            let bib = try columns[0].decode(Int.self)
            let runner = LiveRunner(
                bib: bib, name: RunParticipant.publicName(bib: bib, displayName: try columns[1].decode(String?.self)),
                point: GeoPoint(latitude: try columns[4].decode(Double.self), longitude: try columns[5].decode(Double.self)),
                at: try columns[3].decode(Date.self), finished: try columns[2].decode(Bool.self))
            return (runner, try zone(from: columns, at: 6))
        }
    }
}
