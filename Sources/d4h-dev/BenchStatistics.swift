import ArgumentParser
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation
import Logging

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Bench {
    struct StatisticsLatency: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "statistics",
            abstract: "GET /v1/me/statistics for --days daily buckets (a year), against GET /v1/me (auth and one query) in the same run.",
            discussion: """
                Peer figures are read from stored monthly cells: the first request publishes the missing closed months \
                of the last two (timed apart), and requests are repeated until no more are published before the \
                measured ones.
                """)

        @Option(help: "The server to measure.") var url = "http://127.0.0.1:8080"
        @Option(help: "The server's database (to create the bench person).") var databaseURL: String
        @Option(help: "Requests per measurement.") var requests = 100
        @Option(help: "Days of the window (and of the bench person's data), to today.") var days = 365

        func validate() throws {
            guard requests >= 1, (1...400).contains(days) else { throw ValidationError("--requests must be at least 1 and --days 1–400") }
        }

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let person = try await withDatabase(url: databaseURL, logger: logger) { client in
                try await BenchPeople.create(count: 1, client: client, logger: logger, prefix: "statistics")[0]
            }
            let session = URLSession(configuration: .ephemeral)
            let token = try await BenchPeople.logIn(person, url: url, session: session)
            let base = URL(string: url)!
            let today = CalendarDate.today
            let first = today.dayNumber - (days - 1)

            // The window's heart rate, three readings a day, uploaded through the API.
            var samples: [String] = []
            for day in 0..<days {
                // Today's readings up to now: an upload with a time in the future is refused whole.
                for hour in [8, 14, 20] where Double((first + day) * 86_400 + hour * 3600) <= Date().timeIntervalSince1970 {
                    let at = Date(timeIntervalSince1970: Double((first + day) * 86_400 + hour * 3600))
                    samples.append("{\"type\":\"heart_rate\",\"value\":\(60 + (day + hour) % 30),\"at\":\"\(Timestamp.rfc3339(at))\"}")
                }
            }
            var upload = URLRequest(url: base.appendingPathComponent("v1/me/samples"))
            upload.httpMethod = "POST"
            upload.setValue("application/json", forHTTPHeaderField: "Content-Type")
            upload.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            upload.httpBody = Data("{\"samples\":[\(samples.joined(separator: ","))]}".utf8)
            let (uploaded, uploadResponse) = try await session.data(for: upload)
            try BenchIngestResult.check(uploaded, status: (uploadResponse as? HTTPURLResponse)?.statusCode ?? 0, accepted: samples.count)

            let from = today.adding(days: 1 - days)
            var statistics = URLComponents(url: base.appendingPathComponent("v1/me/statistics"), resolvingAgainstBaseURL: false)!
            statistics.queryItems = [
                .init(name: "type", value: "heart_rate"), .init(name: "bucket", value: "day"),
                .init(name: "from", value: from.description), .init(name: "to", value: today.description),
            ]
            // The first request publishes the missing closed months of the horizon (at most two); later ones find
            // them there, until no request adds any (the background loop may be publishing too).
            let firstRequest = try await time(statistics.url!, token: token, session: session)
            var published = -1
            for _ in 0..<20 {
                let now = try await withDatabase(url: databaseURL, logger: logger) { client in
                    try await client.query(
                        "SELECT count(*) FROM peer_months WHERE month BETWEEN \(from.description)::date AND \(today.description)::date",
                        logger: logger
                    ).collect().first?.decode(Int64.self) ?? 0
                }
                if now == published { break }
                published = Int(now)
                _ = try await time(statistics.url!, token: token, session: session)
            }
            let statisticsTimes = try await measure(statistics.url!, token: token, session: session)
            let profileTimes = try await measure(base.appendingPathComponent("v1/me"), token: token, session: session)
            // What the measured requests answered, decoded: every uploaded reading in the person's own buckets.
            let answer = try await decoded(statistics.url!, token: token, session: session)
            let counted = answer.own.reduce(0) { $0 + $1.count }
            guard counted == samples.count else {
                throw ValidationError("the statistics counted \(counted) readings of the \(samples.count) uploaded")
            }

            print(
                "First request (publishes up to 2 missing peer months): \(String(format: "%.1f", firstRequest)) ms; \(published) months of the window published"
            )
            print(
                "## Statistics (one person, \(days) daily buckets; \(requests) sequential requests; \(answer.peers.buckets.count) peer buckets shown)"
            )
            print("| request | p50 ms | p90 ms | p99 ms | p50 ratio to GET /v1/me |")
            print("|---|---:|---:|---:|---:|")
            let floor = percentile(profileTimes, 0.5)
            for (name, times) in [
                ("GET /v1/me/statistics (\(days) daily buckets + peers)", statisticsTimes), ("GET /v1/me (baseline)", profileTimes),
            ] {
                print(
                    "| \(name) | \(String(format: "%.2f", percentile(times, 0.5))) | \(String(format: "%.2f", percentile(times, 0.9))) | \(String(format: "%.2f", percentile(times, 0.99))) | \(String(format: "%.2f", percentile(times, 0.5) / floor)) |"
                )
            }
        }

        func measure(_ url: URL, token: String, session: URLSession) async throws -> [Double] {
            var times: [Double] = []
            for index in 0..<(requests + 5) {
                let elapsed = try await time(url, token: token, session: session)
                if index >= 5 { times.append(elapsed) }
            }
            return times
        }

        /// What `GET /v1/me/statistics` answers (openapi.yaml `Statistics`), as far as the bench reads it.
        struct StatisticsDocument: Decodable {
            struct Own: Decodable { var count: Int }
            struct Peers: Decodable { var buckets: [PeerBucket] }
            struct PeerBucket: Decodable { var start: String }
            var own: [Own]
            var peers: Peers
        }

        func decoded(_ url: URL, token: String, session: URLSession) async throws -> StatisticsDocument {
            var request = URLRequest(url: url)
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let (data, response) = try await session.data(for: request)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else {
                throw ValidationError("\(url.path) failed: \(String(decoding: data, as: UTF8.self).prefix(300))")
            }
            do { return try JSONDecoder().decode(StatisticsDocument.self, from: data) } catch {
                throw ValidationError("\(url.path) answered no Statistics document (\(error)): \(String(decoding: data, as: UTF8.self).prefix(300))")
            }
        }

        /// One GET, in milliseconds.
        func time(_ url: URL, token: String, session: URLSession) async throws -> Double {
            var request = URLRequest(url: url)
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let start = ContinuousClock.now
            let (data, response) = try await session.data(for: request)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else {
                throw ValidationError("\(url.path) failed: \(String(decoding: data, as: UTF8.self).prefix(300))")
            }
            let elapsed = ContinuousClock.now - start
            return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        }

        func percentile(_ values: [Double], _ fraction: Double) -> Double {
            let sorted = values.sorted()
            return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
        }
    }
}
