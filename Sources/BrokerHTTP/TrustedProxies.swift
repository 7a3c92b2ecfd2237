import BrokerDomain
import Foundation
import HTTPTypes

/// `TRUSTED_PROXIES`: the reverse proxies whose `X-Forwarded-For` is believed (comma-separated addresses or
/// networks; empty by default, when the header is ignored). Behind a proxy every client has the proxy's
/// address; without this, the per-address login limit would count all of them as one client.
package struct TrustedProxies: Sendable, Equatable {
    let networks: [IPNetwork]

    package static let none = TrustedProxies(networks: [])

    /// Parses the setting; the failure names the entry that is not an address or network.
    package static func parse(_ text: String) -> Result<TrustedProxies, ConfigurationError> {
        var networks: [IPNetwork] = []
        for entry in text.split(separator: ",") where !entry.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let network = IPNetwork(entry) else {
                return .failure(
                    .invalid(
                        "TRUSTED_PROXIES",
                        "must be comma-separated IP addresses or networks (CIDR), not \"\(entry.trimmingCharacters(in: .whitespaces))\""))
            }
            networks.append(network)
        }
        return .success(TrustedProxies(networks: networks))
    }

    func trusts(_ address: IPAddress) -> Bool { networks.contains { $0.contains(address) } }

    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// The address that throttling and logs count as the client's. A peer that is not a trusted proxy is the
    /// client, whatever it claims in `X-Forwarded-For` (a client can write anything there). A trusted proxy
    /// appends the address it received from, so the header is read from the right: the first entry that is
    /// not itself a trusted proxy is the client. An entry that is not an address ends the walk at the last
    /// trusted hop, rather than believing anything to its left.
    func clientAddress(peer: String?, headers: HTTPFields) -> String {
        guard let peer else { return "unknown" }
        guard let peerAddress = IPAddress(peer) else { return peer }
        guard trusts(peerAddress) else { return peerAddress.description }
        let entries = headers[values: Self.forwardedFor].flatMap { $0.split(separator: ",") }
        var client = peerAddress
        for entry in entries.reversed() {
            guard let hop = IPAddress(forwardedEntry: entry) else { break }
            client = hop
            if !trusts(hop) { break }
        }
        return client.description
    }
}
