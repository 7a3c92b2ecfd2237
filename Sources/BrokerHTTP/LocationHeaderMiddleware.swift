import BrokerDomain
import Foundation
import HTTPTypes
import Hummingbird

/// Undoes the percent-encoding the generated server code applies to every header it sets from the contract
/// (swift-openapi-generator issue 857): a `Location` of `%2Fv1%2Fme%2Fimports%2F…` is no path a client can
/// follow. Our Location values are paths we built from UUIDs, so decoding them is exact; so are the bulk export's
/// `Content-Location` (the public URL and a UUID) and `X-Progress` (words and numbers).
package struct LocationHeaderMiddleware: RouterMiddleware {
    package init() {}

    package typealias Context = BrokerRequestContext

    /// The headers the contract sets whose values this server builds (none carries a client's text).
    static let builtHere: [HTTPField.Name] = [.location, .contentLocation, HTTPField.Name("X-Progress")!]

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        for name in Self.builtHere {
            if let value = response.headers[name], value.contains("%"), let decoded = value.removingPercentEncoding {
                response.headers[name] = decoded
            }
        }
        return response
    }
}
