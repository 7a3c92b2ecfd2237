import ArgumentParser
import AsyncHTTPClient
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// The calls each kind of client repeats until the deadline.
struct LoadCalls: Sendable {
    let api: BenchAPI
    let fixture: LoadFixture
    let recorder: LoadRecorder
    let deadline: ContinuousClock.Instant

    func upload(as index: Int) async {
        let person = fixture.uploaders[index % fixture.uploaders.count]
        // Each batch covers a fresh 1,000 seconds, walking back in time from now, so no sample is a duplicate.
        var end = Date().addingTimeInterval(-60)
        while ContinuousClock.now < deadline {
            end = end.addingTimeInterval(-1000)
            let body = LoadBodies.heartRates(count: 1000, start: end, step: 1)
            await recorder.call("POST /v1/me/samples (1,000 samples)") {
                try await api.sendRaw(.POST, "/v1/me/samples", token: person.token, body: body, expecting: 200)
            }
        }
    }

    func statistics(as index: Int) async {
        let person = fixture.dataHolders[index % fixture.dataHolders.count]
        let to = Timestamp.rfc3339(Date()).prefix(10)
        let from = Timestamp.rfc3339(Date().addingTimeInterval(-60 * 86_400)).prefix(10)
        let path = "/v1/me/statistics?type=heart_rate&bucket=day&from=\(from)&to=\(to)"
        while ContinuousClock.now < deadline {
            await recorder.call("GET /v1/me/statistics") {
                try await api.sendRaw(.GET, path, token: person.token, body: nil, expecting: 200)
            }
        }
    }

    func list(as index: Int) async {
        while ContinuousClock.now < deadline {
            if index.isMultiple(of: 2) {
                await recorder.call("GET /v1/single-requests (third party)") {
                    try await api.sendRaw(.GET, "/v1/single-requests?limit=100", token: fixture.companyToken, body: nil, expecting: 200)
                }
            } else {
                let person = fixture.dataHolders[index % fixture.dataHolders.count]
                await recorder.call("GET /v1/single-requests (person)") {
                    try await api.sendRaw(.GET, "/v1/single-requests?status=accepted", token: person.token, body: nil, expecting: 200)
                }
            }
        }
    }

    func download(as index: Int) async {
        let id = fixture.grantedRequestIDs[index % fixture.grantedRequestIDs.count]
        while ContinuousClock.now < deadline {
            await recorder.call("GET /v1/single-requests/{id}/data (CSV)") {
                try await api.sendRaw(.GET, "/v1/single-requests/\(id)/data?format=csv", token: fixture.companyToken, body: nil, expecting: 200)
            }
        }
    }

    func logIn(as index: Int) async {
        let person = fixture.dataHolders[index % fixture.dataHolders.count]
        while ContinuousClock.now < deadline {
            await recorder.call("POST /v1/sessions") {
                _ = try await api.logIn(email: person.email, password: person.password)
            }
        }
    }
}
