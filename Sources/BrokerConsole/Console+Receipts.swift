import BrokerDomain
import BrokerHTTP
import Foundation
import HTTPTypes
import Hummingbird

/// Signed consent receipts in the console: the person's list, a company's request with its receipts, and
/// the download of one receipt (the JWS as a `.jwt` file, for `d4h consent verify` or any JOSE library).
extension Console {
    func registerReceiptPages(on router: Router<BrokerRequestContext>) {
        get("/receipts", .role(.user), on: router) { request in
            let page = try await request.listPage { cursor in
                try await request.services.consentReceipts.list(
                    for: try request.caller, page: PageRequest(limit: 100, cursor: cursor), logger: request.logger)
            }
            var values: [String: Any] = ["receipts": page.items.map(Self.receiptItem), "hasReceipts": !page.items.isEmpty]
            ConsoleRequest.addPageLink("/receipts", next: page.next, as: "olderLink", to: &values)
            return request.page("receipts", title: request.t("title.your-consent-receipts"), values: values)
        }
        get("/company/requests/:id", .role(.thirdParty), on: router) { request in
            let id = try request.id(orElse: SingleRequestError.notFound)
            let principal = try request.caller
            let sent = try await request.services.singleRequests.request(id: id, for: principal, logger: request.logger)
            let receipts = try await request.services.consentReceipts.receipts(ofRequest: id, for: principal, logger: request.logger)
            let values: [String: Any] = [
                "request": Self.sentItem(sent), "receipts": receipts.map(Self.receiptItem), "hasReceipts": !receipts.isEmpty,
            ]
            return request.page(
                "company-request", title: request.t("title.request-to", ["subject": Self.sentItem(sent)["subject"] as? String ?? ""]), values: values)
        }
        // One receipt, for the person it names or the company that holds it; the same 404 for anyone else.
        get("/receipts/:id/receipt.jwt", .signedIn, on: router) { request in
            let receipt = try await request.services.consentReceipts.receipt(
                id: try request.id(orElse: SingleRequestError.notFound), for: try request.caller, logger: request.logger)
            var headers = HTTPFields()
            headers[.contentType] = "application/jose"
            headers[.contentDisposition] = "attachment; filename=\"consent-receipt-\(receipt.id.uuidString.lowercased()).jwt\""
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: receipt.jws)))
        }
    }

    /// A receipt in plain words: who, what, for how long, what happened and when.
    static func receiptItem(_ receipt: ConsentReceipt) -> [String: Any] {
        let claims = receipt.claims
        let types = claims.types.compactMap(RequestedType.init(rawValue:)).map(Wording.typeWithUnit)
        let what: String
        switch (claims.status, claims.endedBy) {
        case (.granted, _): what = Wording.strings["receipt.granted"]
        case (.revoked, "third_party"?): what = Wording.strings["receipt.endedByCompany"]
        case (.revoked, _): what = Wording.strings["receipt.endedByPerson"]
        case (.expired, _): what = Wording.strings["receipt.expired"]
        }
        return [
            "id": receipt.id.uuidString.lowercased(),
            "requestID": receipt.requestID.uuidString.lowercased(),
            "status": receipt.status.rawValue,
            "what": what,
            "at": Wording.time(Timestamp.parse(claims.statusAt)),
            "companyName": claims.company.name,
            "vatNumber": claims.company.vatNumber,
            "types": types.joined(separator: ", "),
            "window": Wording.window(from: claims.window.from.flatMap(Timestamp.parse), to: claims.window.to.flatMap(Timestamp.parse)),
            "duration": Wording.duration(subscriptionDays: claims.subscriptionDays),
            "purpose": claims.purpose,
            "subject": claims.subject,
        ]
    }
}
