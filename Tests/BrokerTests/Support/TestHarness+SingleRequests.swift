import BrokerOpenAPI
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// A company and a person who can exchange single requests, and the steps tests repeat.
struct RequestParties: Sendable {
    let company: String
    let companyID: String
    let person: String
    let personID: String
    let personEmail: String
    let personFiscalCode: String
}

extension TestHarness {
    /// A fresh active company and a fresh active person (unique email, fiscal code and VAT number).
    func requestParties(companyName: String = "Cardio Research S.p.A.") async throws -> RequestParties {
        var person = Person()
        person.fiscalCode = Self.uniqueFiscalCode()
        var company = Company()
        company.vatNumber = Self.uniqueVATNumber()
        company.companyName = companyName
        let personToken = try await activeUser(person)
        let companyToken = try await activeCompany(company)
        return RequestParties(
            company: companyToken, companyID: try await accountID(companyToken), person: personToken,
            personID: try await accountID(personToken), personEmail: person.email, personFiscalCode: person.fiscalCode)
    }

    /// `POST /v1/single-requests` to the person by email.
    func sendRequest(
        _ parties: RequestParties, types: [String] = ["heart_rate"], subscriptionDays: Int? = nil,
        window: Components.Schemas.RequestWindowInput? = nil, purpose: String = "Cardiology study", purposeCode: String = "HRESCH",
        expiresAt: String? = nil
    ) async throws -> TestResponse {
        let body = Components.Schemas.SingleRequestCreation(
            subject: .init(email: parties.personEmail), types: types, purpose: purpose, window: window,
            subscription: subscriptionDays.map { .init(days: $0) }, purposeCode: purposeCode, expiresAt: expiresAt)
        return try await request(.post, "/v1/single-requests", json: body.contractJSON, token: parties.company)
    }

    /// Sends a request and returns its id (the request must be created).
    func sentRequestID(
        _ parties: RequestParties, types: [String] = ["heart_rate"], subscriptionDays: Int? = nil,
        window: Components.Schemas.RequestWindowInput? = nil
    )
        async throws -> String
    {
        let response = try await sendRequest(parties, types: types, subscriptionDays: subscriptionDays, window: window)
        try #require(response.status == .created, "create answered \(response.status): \(text(response))")
        return try #require(try object(response)["id"] as? String)
    }

    /// Sends and accepts a request; returns its id.
    func acceptedRequestID(
        _ parties: RequestParties, types: [String] = ["heart_rate"], subscriptionDays: Int? = nil,
        window: Components.Schemas.RequestWindowInput? = nil
    )
        async throws -> String
    {
        let id = try await sentRequestID(parties, types: types, subscriptionDays: subscriptionDays, window: window)
        let accepted = try await request(.post, "/v1/single-requests/\(id)/accept", token: parties.person)
        try #require(accepted.status == .ok, "accept answered \(accepted.status): \(text(accepted))")
        return id
    }

    /// One JSON download: the items as (type, at, value) and the next cursor.
    func download(_ id: String, cursor: String? = nil, token: String) async throws
        -> (items: [(type: String, at: String, value: Double)], availableTypes: [String], nextCursor: String)
    {
        let query = cursor.map { "?cursor=\($0)" } ?? ""
        let response = try await request(.get, "/v1/single-requests/\(id)/data\(query)", token: token)
        try #require(response.status == .ok, "download answered \(response.status): \(text(response))")
        let body = try object(response)
        let items = (body["items"] as? [[String: Any]] ?? []).map {
            (type: $0["type"] as? String ?? "", at: $0["at"] as? String ?? "", value: ($0["value"] as? NSNumber)?.doubleValue ?? .nan)
        }
        let cursor = try #require(body["nextCursor"] as? String)
        #expect(response.headers[HTTPField.Name("Data4Help-Next-Cursor")!] == cursor)
        return (items, body["availableTypes"] as? [String] ?? [], cursor)
    }

    /// Uploads heart-rate samples at the given times (values 60, 61, …), requiring success.
    func uploadHeartRates(_ times: [String], token: String, firstValue: Double = 60) async throws {
        let samples = times.enumerated().map { (type: "heart_rate", value: firstValue + Double($0.offset), at: $0.element) }
        let response = try await upload(samples, token: token)
        try #require(response.status == .ok, "upload answered \(response.status): \(text(response))")
    }

    /// `2026-03-01T08:00:00Z` plus `minutes`.
    static func time(minutes: Int, day: String = "2026-03-01") -> String {
        String(format: "\(day)T%02d:%02d:00Z", 8 + minutes / 60, minutes % 60)
    }
}
