import BrokerDomain
import Foundation
import Hummingbird

/// Undoes the percent-encoding the generated server code applies to every header it sets from the contract
/// (swift-openapi-generator issue 857): a `Location` of `%2Fv1%2Fme%2Fimports%2F…` is no path a client can
/// follow. Our Location values are paths we built from UUIDs, so decoding them is exact.
package struct LocationHeaderMiddleware: RouterMiddleware {
    package init() {}

    package typealias Context = BrokerRequestContext

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        if let location = response.headers[.location], location.contains("%"), let decoded = location.removingPercentEncoding {
            response.headers[.location] = decoded
        }
        return response
    }
}
