import BrokerDomain
import HTTPTypes
import Synchronization

/// How many FHIR Bundle uploads (`POST /v1/me/samples`, `application/fhir+json`) this server decodes at
/// once. The generated code turns such a body into a generic JSON tree before the handler runs, and that
/// tree costs memory in proportion to the body (up to `fhirBundleBodyLimit`): a few at a time stay within
/// the server's means, a burst is answered 503 with `Retry-After` instead of taking all of its memory.
final class BundleDecodeSlots: Sendable {
    static let limit = 2
    private let inUse = Mutex(0)

    /// Whether `request` is a Bundle upload, the only body this bounds.
    static func holdsBundle(_ request: HTTPRequest, operation: String) -> Bool {
        operation == "POST /v1/me/samples"
            && (request.headerFields[.contentType] ?? "").lowercased().trimmingCharacters(in: .whitespaces).hasPrefix("application/fhir+json")
    }

    /// Runs `body` in a slot, or throws `BundleUploadsBusy` when every slot is taken.
    func run<Result>(_ body: () async throws -> Result) async throws -> Result {
        let entered = inUse.withLock { count in
            guard count < Self.limit else { return false }
            count += 1
            return true
        }
        guard entered else { throw BundleUploadsBusy() }
        defer { inUse.withLock { $0 -= 1 } }
        return try await body()
    }
}

/// Every slot for FHIR Bundle uploads is taken: 503, try again shortly.
struct BundleUploadsBusy: Error, ProblemConvertible {
    var problem: Problem {
        Problem(
            status: .serviceUnavailable, slug: "bundle-uploads-busy", title: "Too many FHIR Bundles are being read",
            detail: "The server reads a few FHIR Bundle uploads at a time and all of them are in use; send it again in a few seconds.",
            headers: [.retryAfter: "2"])
    }
}
