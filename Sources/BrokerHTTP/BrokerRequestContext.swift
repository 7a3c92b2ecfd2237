import BrokerDomain
import Hummingbird
import NIOCore

/// The per-request context: Hummingbird's core storage plus the client's address (for login throttling).
package struct BrokerRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let remoteAddress: SocketAddress?

    package init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }
}
