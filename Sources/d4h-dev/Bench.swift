import ArgumentParser
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure a running server. Results are ratios against baselines measured in the same run.",
        subcommands: [
            Login.self, Load.self, Accounts.self, Ingest.self, SmallUploads.self, StatisticsLatency.self, AppleHealthParse.self, AppleHealthFile.self,
            Webhooks.self,
            GroupRequestEvaluation.self, GroupAccuracy.self, GroupQuantiles.self, PeerAccuracy.self, GroupReadmeRequest.self, SOSMonitorBench.self,
            Runs.self, DownloadSetup.self, Mail.self,
        ])

    struct Login: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Login latency (POST /v1/sessions) against two floors: a bare Argon2id verification and GET /health/live.")

        @Option(help: "The server to measure.") var url = "http://127.0.0.1:8080"
        @Option(help: "An active account's email.") var email = "demo.user@data4help.example"
        @Option(help: "Its password.") var password = "demo-user-password"
        @Option(help: "Requests per measurement (sequential, after 5 warm-up requests).") var requests = 200

        func run() async throws {
            let session = URLSession(configuration: .ephemeral)
            guard let base = URL(string: url) else { throw ValidationError("--url is not a URL") }
            let body = try JSONSerialization.data(withJSONObject: ["email": email, "password": password])

            var login = URLRequest(url: base.appendingPathComponent("v1/sessions"))
            login.httpMethod = "POST"
            login.setValue("application/json", forHTTPHeaderField: "Content-Type")
            login.httpBody = body
            let live = URLRequest(url: base.appendingPathComponent("health/live"))

            let hasher = PasswordHasher()
            let stored = try await hasher.hash(password)

            let loginTimes = try await measure(requests) { try await Self.send(login, on: session, expecting: 201) }
            let liveTimes = try await measure(requests) { try await Self.send(live, on: session, expecting: 200) }
            let argonTimes = try await measure(requests) { _ = try await hasher.verify(password, against: stored) }

            let p = hasher.parameters
            print("Argon2id m=\(p.memoryKiB) KiB, t=\(p.iterations), p=\(p.parallelism); \(requests) sequential requests each")
            print("| measurement | p50 ms | p90 ms | p99 ms | p50 ratio to login |")
            print("|---|---:|---:|---:|---:|")
            let loginMedian = percentile(loginTimes, 0.5)
            for (name, times) in [
                ("POST /v1/sessions (login)", loginTimes), ("Argon2id verify alone", argonTimes),
                ("GET /health/live", liveTimes),
            ] {
                let median = percentile(times, 0.5)
                print(
                    "| \(name) | \(format(median)) | \(format(percentile(times, 0.9))) | \(format(percentile(times, 0.99))) | \(String(format: "%.2f", median / loginMedian)) |"
                )
            }
        }

        static func send(_ request: URLRequest, on session: URLSession, expecting status: Int) async throws {
            let (_, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse, http.statusCode == status else {
                throw ValidationError("\(request.url?.path ?? "") answered \((response as? HTTPURLResponse)?.statusCode ?? 0), expected \(status)")
            }
        }

        /// Milliseconds of each of `count` runs of `work`, after five warm-up runs.
        func measure(_ count: Int, _ work: () async throws -> Void) async throws -> [Double] {
            for _ in 0..<5 { try await work() }
            var times: [Double] = []
            let clock = ContinuousClock()
            for _ in 0..<count {
                let elapsed = try await clock.measure { try await work() }
                times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
            }
            return times
        }

        func format(_ milliseconds: Double) -> String { String(format: "%.2f", milliseconds) }
    }
}

/// The value at `fraction` (0–1) of `values`, nearest rank; the benches' one percentile.
func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
}
