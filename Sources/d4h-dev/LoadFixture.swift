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

/// What the load needs before the clock starts: people with sessions, a company with granted requests.
struct LoadFixture: Sendable {
    struct Person: Sendable {
        var email: String
        var password: String
        var token: String
    }

    var uploaders: [Person]
    /// People holding `downloadRows` samples who accepted a one-off request of the company.
    var dataHolders: [Person]
    var grantedRequestIDs: [String]
    var companyToken: String

    static func prepare(api: BenchAPI, databaseURL: String, uploaders: Int, dataHolders: Int, downloadRows: Int) async throws
        -> LoadFixture
    {
        let logger = makeLogger(level: .warning)
        let (people, company) = try await withDatabase(url: databaseURL, logger: logger) { client in
            (
                try await BenchPeople.create(count: uploaders + dataHolders, client: client, logger: logger, prefix: "load"),
                try await BenchCompany.create(client: client, logger: logger)
            )
        }
        var sessions: [Person] = []
        for person in people {
            sessions.append(
                Person(email: person.email, password: person.password, token: try await api.logIn(email: person.email, password: person.password)))
        }
        let companyToken = try await api.logIn(email: company.email, password: company.password)
        let holders = Array(sessions.suffix(dataHolders))
        var requestIDs: [String] = []
        let dayStart = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 86_400).rounded(.down) * 86_400 - 30 * 86_400)
        for holder in holders {
            // One reading a minute ending a few minutes ago: statistics see ~a week of days.
            var offset = 0
            while offset < downloadRows {
                let count = min(10_000, downloadRows - offset)
                let body = LoadBodies.heartRates(count: count, start: dayStart.addingTimeInterval(Double(offset) * 60), step: 60)
                try await api.sendRaw(.POST, "/v1/me/samples", token: holder.token, body: body, expecting: 200)
                offset += count
            }
            let request = try await api.sendJSON(
                .POST, "/v1/single-requests", token: companyToken,
                json: ["subject": ["email": holder.email], "types": ["heart_rate"], "purpose": "Load test", "purposeCode": "HRESCH"], expecting: 201)
            guard let id = request["id"] as? String else { throw ValidationError("the request was created without an id") }
            try await api.sendRaw(.POST, "/v1/single-requests/\(id)/accept", token: holder.token, body: nil, expecting: 200)
            requestIDs.append(id)
        }
        return LoadFixture(
            uploaders: Array(sessions.prefix(uploaders)), dataHolders: holders, grantedRequestIDs: requestIDs,
            companyToken: companyToken)
    }
}
