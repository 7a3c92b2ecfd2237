import BrokerDomain
import Hummingbird
import OpenAPIRuntime
import Prometheus

/// Adds the API's generated routes to `router`, with the streaming ones replaced by hand-written handlers,
/// the unauthenticated ones gated, and a 405 for every other method of a known path.
package func registerAPI(
    on router: Router<BrokerRequestContext>, services: Services, metrics: PrometheusCollectorRegistry, budgeted: BudgetedOperations
) throws {
    let api = BrokerAPI(services, metrics: metrics, budgeted: budgeted)
    let streaming = StreamingEndpoints(api: api)
    let transport = RouteRecordingTransport(
        router: router, replacements: streaming.handlers, bufferReplacements: streaming.bufferHandlers,
        gate: AuthenticationGate(accounts: services.accounts), outageGuard: OutageGuard(availability: services.availability))
    // Compact JSON (the generator's default pretty-prints): smaller, and a line-oriented script can read it.
    try api.registerHandlers(
        on: transport, configuration: .init(dateTranscoder: RFC3339DateTranscoder(), jsonEncodingOptions: [.sortedKeys]))
    transport.registerMethodNotAllowed()
}
