import AutomatedSOS
import Data4HelpClient
import Foundation
import OpenAPIURLSession
import Testing

/// The phone-side uploader against the real server and database: alerts before any network, and a process
/// killed with samples queued loses none and stores none twice.
@Suite("Monitored uploader against the server", .serialized)
struct MonitoredUploaderServerTests {
    /// A new active person, and the generated client signed in as them against the harness's server.
    func personWithClient(_ harness: TestHarness) async throws -> (token: String, client: Client) {
        var person = TestHarness.Person()
        person.fiscalCode = TestHarness.uniqueFiscalCode()
        let token = try await harness.activeUser(person)
        let port = try #require(harness.client.port)
        let client = Client(
            serverURL: try #require(URL(string: "http://127.0.0.1:\(port)")), configuration: .data4Help,
            transport: URLSessionTransport(), middlewares: [BearerTokenMiddleware { token }])
        return (token, client)
    }

    @Test("alerts first, uploads later; a restart on the same outbox sends what was left, each sample stored once")
    func uploadsThroughTheRealServer() async throws {
        try await TestHarness.run { harness in
            let (token, client) = try await personWithClient(harness)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-outbox-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 60).rounded(.down) * 60 - 3600)
            func sample(_ minute: Int, _ value: Double) -> SOSSample {
                SOSSample(type: .heartRate, value: value, at: start.addingTimeInterval(Double(minute) * 60))
            }

            // Two consecutive critical readings raise the alert at once, before anything is uploaded.
            let first = try MonitoredUploader(
                monitor: SOSMonitor(age: 40), onAlert: { _ in }, outboxDirectory: directory, client: client)
            #expect(try await first.record(sample(0, 72)).isEmpty)
            #expect(try await first.record(sample(1, 30)).isEmpty)
            #expect(try await first.record(sample(2, 31)).count == 1)
            #expect(try await first.flush().stored == 3)
            #expect(await first.pendingCount == 0)

            // Two more are queued, then the process dies before uploading them.
            try await first.record(sample(3, 70))
            try await first.record(sample(4, 71))
            let second = try MonitoredUploader(
                monitor: SOSMonitor(age: 40), onAlert: { _ in }, outboxDirectory: directory, client: client)
            #expect(await second.pendingCount == 2)
            #expect(try await second.flush().stored == 2)
            #expect(try await second.flush().stored == 0)

            let stored = try harness.object(try await harness.request(.get, "/v1/me/samples?limit=1000", token: token))
            let values = (stored["items"] as? [[String: Any]] ?? []).compactMap { $0["value"] as? Double }
            #expect(values.sorted() == [30, 31, 70, 71, 72])
        }
    }

    @Test("a sample the server refuses (from the future: a wrong device clock) is quarantined; the rest is stored once")
    func aRefusedSampleDoesNotBlockTheOutbox() async throws {
        try await TestHarness.run { harness in
            let (token, client) = try await personWithClient(harness)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-outbox-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            let uploader = try MonitoredUploader(monitor: nil, onAlert: { _ in }, outboxDirectory: directory, client: client)
            try await uploader.record(SOSSample(type: .heartRate, value: 70, at: now.addingTimeInterval(-120)))
            try await uploader.record(SOSSample(type: .heartRate, value: 71, at: now.addingTimeInterval(2 * 86_400)))
            try await uploader.record(SOSSample(type: .heartRate, value: 72, at: now.addingTimeInterval(-60)))

            let report = try await uploader.flush()
            #expect(report.stored == 2)
            #expect(report.rejected == 1)
            #expect(await uploader.pendingCount == 0)
            let rejected = await uploader.rejectedSamples
            #expect(rejected.map(\.sample.value) == [71])
            #expect(rejected.first?.messages.isEmpty == false)
            // The next sample is not stuck behind the refused one.
            try await uploader.record(SOSSample(type: .heartRate, value: 73, at: now))
            #expect(try await uploader.flush().stored == 1)

            let stored = try harness.object(try await harness.request(.get, "/v1/me/samples?limit=1000", token: token))
            let values = (stored["items"] as? [[String: Any]] ?? []).compactMap { $0["value"] as? Double }
            #expect(values.sorted() == [70, 72, 73])
        }
    }
}
