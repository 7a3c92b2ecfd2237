import ArgumentParser
import AsyncHTTPClient
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation
import NIOCore

extension Bench {
    /// The subscription `bench/run` downloads (`BENCH_ONLY=download`), made the way a person and a company
    /// make one: registered and activated through `AccountService`, the samples uploaded and the request
    /// sent and accepted through the API. `bench/run` times the downloads itself (curl, the server's RSS).
    struct DownloadSetup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "download-setup",
            abstract: "Make a person with --rows samples and a company holding an accepted request for all of them; prints JSON.",
            discussion: """
                Prints {"requestId", "token" (the company's session), "userId", "rows"} on standard output. The samples \
                are four types in turn (heart rate, systolic and diastolic pressure, oxygen saturation), one every 7 s \
                from 2025-01-01, uploaded 10,000 at a time.
                """)

        @Option(help: "The server.") var url = "http://127.0.0.1:8080"
        @Option(help: "The server's database (to register the person and the company).") var databaseURL: String
        @Option(help: "Samples the subscription holds.") var rows = 1_000_000

        static let types = ["heart_rate", "systolic_pressure", "diastolic_pressure", "oxygen_saturation"]

        func validate() throws {
            guard rows >= 1 else { throw ValidationError("--rows must be at least 1") }
        }

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let (person, company) = try await withDatabase(url: databaseURL, logger: logger) { client in
                (
                    try await BenchPeople.create(count: 1, client: client, logger: logger, prefix: "download")[0],
                    try await BenchCompany.create(name: "Download Bench S.r.l.", prefix: "download-company", client: client, logger: logger)
                )
            }
            let rows = rows
            let document = try await HTTPClient.withHTTPClient { http in
                let api = BenchAPI(http: http, base: url)
                let personToken = try await api.logIn(email: person.email, password: person.password)
                let companyToken = try await api.logIn(email: company.email, password: company.password)
                for offset in stride(from: 0, to: rows, by: SampleBatch.maximumCount) {
                    let count = min(SampleBatch.maximumCount, rows - offset)
                    let answer = try await api.sendRaw(
                        .POST, "/v1/me/samples", token: personToken, body: Self.body(first: offset, count: count), expecting: 200)
                    try BenchIngestResult.check(answer.readableBytesView, status: 200, accepted: count)
                }
                let created = try await api.sendJSON(
                    .POST, "/v1/single-requests", token: companyToken,
                    json: ["subject": ["email": person.email], "types": Self.types, "purpose": "Download benchmark", "purposeCode": "HRESCH"],
                    expecting: 201)
                guard let id = created["id"] as? String, created["status"] as? String == "pending" else {
                    throw ValidationError("the request was created as \(created), not pending with an id")
                }
                let answer = try await api.sendRaw(.POST, "/v1/single-requests/\(id)/accept", token: personToken, body: nil, expecting: 200)
                let accepted = (try JSONSerialization.jsonObject(with: Data(buffer: answer)) as? [String: Any]) ?? [:]
                guard accepted["status"] as? String == "accepted" else { throw ValidationError("the request was answered \(accepted), not accepted") }
                return (id, companyToken)
            }
            let data = try JSONSerialization.data(
                withJSONObject: ["requestId": document.0, "token": document.1, "userId": person.id.uuidString.lowercased(), "rows": rows]
                    as [String: Any],
                options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        }

        /// Samples `first + 1` … `first + count`: sample `n` is of type `n % 4`, at 2025-01-01 plus 7 n seconds.
        static func body(first: Int, count: Int) -> ByteBuffer {
            let start = Date(timeIntervalSince1970: 1_735_689_600)
            var text = "{\"samples\":["
            text.reserveCapacity(count * 80)
            for n in (first + 1)...(first + count) {
                if n > first + 1 { text += "," }
                let at = Timestamp.rfc3339(start.addingTimeInterval(Double(n) * 7))
                text += "{\"type\":\"\(types[n % 4])\",\"value\":\(60 + Double(n % 400) / 10),\"at\":\"\(at)\"}"
            }
            text += "]}"
            return ByteBuffer(string: text)
        }
    }
}
