import BrokerDomain
import Hummingbird
import Prometheus

/// Counts requests and records their latency by route template, method and status, into the application's
/// own registry (no process-wide metrics bootstrap, so several applications can live in one test process).
package struct HTTPMetricsMiddleware: RouterMiddleware {
    package init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    package typealias Context = BrokerRequestContext
    let registry: PrometheusCollectorRegistry

    static let buckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
    ]

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        // The route template, never the concrete path: paths carry ids and would explode the label set.
        let route = context.endpointPath ?? "unmatched"
        let labels = [("route", route), ("method", request.method.rawValue), ("status", String(response.status.code))]
        registry.makeCounter(name: "http_requests_total", labels: labels).increment()
        registry.makeDurationHistogram(name: "http_request_duration_seconds", labels: labels, buckets: Self.buckets)
            .record(ContinuousClock.now - start)
        return response
    }
}
