import BrokerDomain
import BrokerTestSupport
import Foundation
import Logging
import PostgresNIO

/// Track4Run's demo (`d4h seed`): one live run with synthetic runners moving along a loop around Milan, and
/// one upcoming run, organised by the demo company. Built through the services: the run is created, joined,
/// its requests accepted and its runners checked in as the API would. Two things the API would never allow
/// are done here, because a demo cannot wait: the live run is moved to have started a quarter of an hour ago,
/// and each runner's track is written ahead for the whole run (each fix appears on the spectators' page
/// as its time comes, and the finish is detected when it does).
package struct DemoRuns: Sendable {
    package static let liveName = "Giro di Milano (demo)"
    package static let upcomingName = "Sempione 10K (demo)"
    /// The runners are a small synthetic population of their own (no passwords).
    static let runners = SyntheticPopulation(people: 24, days: 1, seed: 419)
    static let displayNames = ["Luca", "Sara", "Giorgio", "Marta", "Paolo", "Chiara", "Davide", "Elisa", "Franco", "Irene", "Matteo", "Nora"]

    let client: DatabasePool
    let logger: Logger

    package init(client: DatabasePool, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Creates what is missing: a live run unless one is live, an upcoming one unless one is planned.
    /// Returns a line for each run.
    package func apply(organiserEmail: String) async throws -> [String] {
        let runs = RunService(
            client: client, singleRequests: SingleRequestService(client: client, pseudonymizer: Pseudonymizer(client: client)),
            outbox: MailOutbox(client: client, publicURL: "http://127.0.0.1:8080"))
        guard let organiser = try await accountID(of: organiserEmail) else { return ["no demo company: no demo runs"] }
        let company = Principal(accountID: organiser, role: .thirdParty, credential: .session(tokenHash: Data()))
        _ = try await Self.runners.write(client: client, logger: logger)
        var people: [UUID] = []
        for number in 0..<Self.runners.people {
            if let id = try await accountID(of: Self.runners.email(ofPerson: number)) { people.append(id) }
        }
        var lines: [String] = []
        let live = try await runs.list(state: .live, page: PageRequest(limit: 100), logger: logger).items.first { $0.name == Self.liveName }
        if let live {
            lines.append("\(Self.liveName): already live (/runs/\(live.id.uuidString.lowercased()))")
        } else {
            let run = try await liveRun(company: company, people: people)
            lines.append("\(Self.liveName): live, \(people.count) runners (/runs/\(run.uuidString.lowercased()))")
        }
        let upcoming = try await runs.list(state: .upcoming, page: PageRequest(limit: 100), logger: logger).items.first {
            $0.name == Self.upcomingName
        }
        if let upcoming {
            lines.append("\(Self.upcomingName): already planned (/runs/\(upcoming.id.uuidString.lowercased()))")
        } else {
            let tomorrow = CalendarDate.today.adding(days: 1).description + "T08:00:00Z"
            let run = try await runs.create(
                .init(
                    name: Self.upcomingName, startsAt: Timestamp.parse(tomorrow).map { Parsed.value($0) }, durationMinutes: 90, maxParticipants: 200,
                    path: .init(format: .value(.geojson), text: Self.sempione)),
                by: company, logger: logger)
            for person in people.prefix(3) {
                _ = try await runs.join(id: run.id, displayName: nil, by: Self.person(person), logger: logger)
            }
            lines.append("\(Self.upcomingName): starts \(tomorrow), 3 runners joined (/runs/\(run.id.uuidString.lowercased()))")
        }
        return lines
    }

    private func liveRun(company: Principal, people: [UUID]) async throws -> UUID {
        let path = Self.loop
        let start = Date().addingTimeInterval(-15 * 60)
        let run = try await startedRun(
            name: Self.liveName, organiser: company.accountID, runners: people, path: path, startedAt: start, durationMinutes: 180,
            displayNames: Self.displayNames)
        for (index, person) in people.enumerated() {
            let track = Self.track(along: path, from: start, pace: 2.4 + Double(index % 12) * 0.12, runner: index, for: 180 * 60)
            try await client.withTransaction(logger: logger) { connection in
                _ = try await PositionStore.ingest(track, for: person, on: connection, logger: logger)
            }
        }
        return run
    }

    /// A run that started at `startedAt` with every runner joined, their run request accepted and checked
    /// in at the start, made through the services as the API would (then moved to its start, which the API
    /// would not allow: its start must lie ahead). The demo and `d4h bench runs` use it.
    package func startedRun(
        name: String, organiser: UUID, runners: [UUID], path: RunPath, startedAt start: Date, durationMinutes: Int, displayNames: [String] = []
    ) async throws -> UUID {
        let singleRequests = SingleRequestService(client: client, pseudonymizer: Pseudonymizer(client: client))
        let runs = RunService(
            client: client, singleRequests: singleRequests, outbox: MailOutbox(client: client, publicURL: "http://127.0.0.1:8080"))
        let positions = PositionService(client: client)
        let company = Principal(accountID: organiser, role: .thirdParty, credential: .session(tokenHash: Data()))
        let run = try await runs.create(
            .init(
                name: name, startsAt: .value(Date().addingTimeInterval(600)), durationMinutes: durationMinutes,
                maxParticipants: max(runners.count, 1), path: .init(format: .value(.geojson), text: Self.geoJSON(path))),
            by: company, logger: logger)
        for (index, person) in runners.enumerated() {
            let principal = Self.person(person)
            let place = try await runs.join(
                id: run.id, displayName: index < displayNames.count ? displayNames[index] : nil, by: principal, logger: logger)
            guard let requestID = place.requestID else { continue }
            _ = try await singleRequests.accept(id: requestID, by: principal, logger: logger)
            _ = try await positions.upload(
                [.init(at: Timestamp.rfc3339(Date()), latitude: path.start.latitude, longitude: path.start.longitude, elevation: 120, accuracy: 5)],
                by: principal, logger: logger)
            _ = try await runs.checkIn(id: run.id, by: principal, logger: logger)
        }
        // The requests' windows move with the start, as the run's own edit would have sent them for that time.
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                UPDATE single_requests q SET window_from = q.window_from - d.shift, window_to = q.window_to - d.shift
                FROM (SELECT starts_at - \(Timestamp.postgresText(start))::timestamptz AS shift FROM runs WHERE id = \(run.id)) d
                WHERE q.id IN (SELECT request_id FROM run_participants WHERE run_id = \(run.id))
                """, logger: logger)
            try await connection.query(
                "UPDATE runs SET starts_at = \(Timestamp.postgresText(start))::timestamptz WHERE id = \(run.id)", logger: logger)
        }
        return run.id
    }

    static func person(_ id: UUID) -> Principal { Principal(accountID: id, role: .user, credential: .session(tokenHash: Data())) }

    private func accountID(of email: String) async throws -> UUID? {
        try await client.withConnection { connection in
            try await connection.query("SELECT id FROM accounts WHERE email = \(email)", logger: logger).collect().first?.decode(UUID.self)
        }
    }

    // MARK: Paths and tracks

    /// A 21 km loop around Milan's centre (an ellipse through the ring roads), starting and ending in the north.
    package static let loop: RunPath = {
        let centre = GeoPoint(latitude: 45.4642, longitude: 9.1900)
        let (north, east) = (3_200.0, 3_600.0)
        let points = (0...240).map { step -> GeoPoint in
            let angle = Double(step) / 240 * 2 * .pi
            return GeoPoint(
                latitude: centre.latitude + north * cos(angle) / 111_195,
                longitude: centre.longitude + east * sin(angle) / (111_195 * cos(centre.latitude * .pi / 180)))
        }
        return RunPath(points: points)
    }()

    static let sempione =
        #"{"type":"LineString","coordinates":[[9.1726,45.4735],[9.1772,45.4760],[9.1795,45.4729],[9.1768,45.4703],[9.1726,45.4735]]}"#

    static func geoJSON(_ path: RunPath) -> String {
        #"{"type":"LineString","coordinates":["# + path.points.map { "[\($0.longitude),\($0.latitude)]" }.joined(separator: ",") + "]}"
    }

    /// A runner's fixes every 5 seconds at `pace` m/s (with a little wobble), until they finish the loop or the run ends.
    static func track(along path: RunPath, from start: Date, pace: Double, runner: Int, for seconds: Int) -> [Position] {
        let total = path.metres
        var fixes: [Position] = []
        for second in stride(from: 5, through: seconds, by: 5) {
            let wobble = 1 + 0.05 * sin(Double(second) / 300 + Double(runner))
            let covered = min(total, pace * wobble * Double(second))
            let point = path.point(atMetres: covered)
            fixes.append(
                Position(
                    at: start.addingTimeInterval(Double(second)), latitude: point.latitude + 0.00003 * sin(Double(runner * 7 + second)),
                    longitude: point.longitude, elevation: 120, accuracy: 5))
            if covered >= total { break }
        }
        return fixes
    }
}
