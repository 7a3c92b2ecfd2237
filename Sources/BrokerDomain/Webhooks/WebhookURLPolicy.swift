import Foundation
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which URLs a webhook may point to: checked when it is registered and again before delivery (the loop
/// reuses a verdict for `urlRecheck`, `RecentURLChecks`), because a host name can be re-pointed at an internal address after registration (server-side request
/// forgery). Without `allowPrivate`, only `https` to hosts that resolve to public addresses only.
package struct WebhookURLPolicy: Sendable {
    package var allowPrivate: Bool

    package static let maxLength = 2048

    package init(allowPrivate: Bool) { self.allowPrivate = allowPrivate }

    /// The URL, or why it cannot be used (the message completes "url …" in a 422).
    package func check(_ text: String) async -> Result<URL, Rejection> {
        let url: URL
        let host: String
        switch checkSyntax(text) {
        case .success(let parsed): (url, host) = parsed
        case .failure(let rejection): return .failure(rejection)
        }
        let addresses: [[UInt8]]
        do {
            addresses = try await Self.resolverThreads.runIfActive { try Self.resolve(host) }
        } catch {
            return .failure(.doesNotResolve)
        }
        if addresses.isEmpty { return .failure(.doesNotResolve) }
        // Every address must be public: a client may connect to any of them.
        if !allowPrivate, !addresses.allSatisfy(Self.isPublic) { return .failure(.notPublic) }
        return .success(url)
    }

    /// The checks that need no network: length, scheme, host, no user name or password.
    package func checkSyntax(_ text: String) -> Result<(url: URL, host: String), Rejection> {
        guard text.utf8.count <= Self.maxLength else { return .failure(.tooLong) }
        guard let components = URLComponents(string: text), let url = components.url else { return .failure(.malformed) }
        let scheme = components.scheme?.lowercased()
        guard scheme == "https" || (allowPrivate && scheme == "http") else {
            return .failure(allowPrivate ? .schemeNotHTTP : .schemeNotHTTPS)
        }
        guard components.user == nil, components.password == nil else { return .failure(.hasUserInfo) }
        var host = components.host ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return .failure(.malformed) }
        return .success((url, host))
    }

    /// Why a URL is refused. The reason is for the server's own tests and logic only: every refusal is
    /// answered with the same `message`, because telling "does not resolve" from "resolves to an internal
    /// address" (or a re-pointed host at delivery time) turned registration into an oracle for the
    /// server's internal DNS.
    package enum Rejection: Error, Equatable, Sendable {
        case tooLong, malformed, schemeNotHTTPS, schemeNotHTTP, hasUserInfo, doesNotResolve, notPublic

        /// The one answer to every refused URL (it completes "url …" in a 422): every rule at once.
        package static let requirements =
            "must be an absolute https URL of at most \(WebhookURLPolicy.maxLength) characters, without a user name or password, "
            + "whose host resolves, and only to public internet addresses (not loopback, private, link-local or reserved)"

        /// The same for every reason; a server that allows private addresses (development) also takes http.
        package var message: String { Self.requirements }
    }

    // MARK: Addresses

    /// getaddrinfo blocks, for seconds when a name server does not answer (and a third party chooses
    /// its name servers). So it runs on threads of its own: off the event loops and the cooperative pool,
    /// and off `NIOThreadPool.singleton`, where it would hold up password hashing (logins).
    static let resolverThreads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 16)
        pool.start()
        return pool
    }()

    /// The raw addresses (4 or 16 bytes) `host` resolves to; an IP literal resolves to itself.
    static func resolve(_ host: String) throws -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0 else { throw ResolutionFailed(code: status) }
        defer { freeaddrinfo(list) }
        var addresses: [[UInt8]] = []
        var next = list
        while let entry = next?.pointee {
            if let socketAddress = entry.ai_addr {
                switch Int32(entry.ai_family) {
                case AF_INET:
                    var raw = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                    addresses.append(withUnsafeBytes(of: &raw) { Array($0) })
                case AF_INET6:
                    var raw = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    addresses.append(withUnsafeBytes(of: &raw) { Array($0) })
                default:
                    break
                }
            }
            next = entry.ai_next
        }
        return addresses
    }

    struct ResolutionFailed: Error { var code: Int32 }

    /// The bytes of an IPv4 or IPv6 literal (`10.0.0.1`, `::1`), or nil when `text` is neither.
    package static func parseAddress(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// Whether an address (4 or 16 bytes, network order) is reachable on the public internet: not
    /// loopback, private, shared (CGNAT), link-local, multicast, broadcast, documentation or otherwise
    /// reserved (the IANA special-purpose registries). IPv6 must be global unicast (2000::/3); IPv6
    /// forms that carry an IPv4 address (mapped, NAT64, 6to4) are judged by that address.
    package static func isPublic(_ address: [UInt8]) -> Bool {
        switch address.count {
        case 4: return isPublicIPv4(address)
        case 16: return isPublicIPv6(address)
        default: return false
        }
    }

    private static func isPublicIPv4(_ a: [UInt8]) -> Bool {
        let value = a.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        for (network, prefix) in reservedIPv4 {
            let mask: UInt32 = prefix == 0 ? 0 : ~UInt32(0) << (32 - prefix)
            if value & mask == network & mask { return false }
        }
        return true
    }

    /// IANA IPv4 special-purpose blocks that are not globally reachable.
    private static let reservedIPv4: [(UInt32, Int)] = [
        (0x0000_0000, 8),  // 0.0.0.0/8 "this network"
        (0x0A00_0000, 8),  // 10.0.0.0/8 private
        (0x6440_0000, 10),  // 100.64.0.0/10 shared address space (CGNAT)
        (0x7F00_0000, 8),  // 127.0.0.0/8 loopback
        (0xA9FE_0000, 16),  // 169.254.0.0/16 link-local (cloud metadata lives here)
        (0xAC10_0000, 12),  // 172.16.0.0/12 private
        (0xC000_0000, 24),  // 192.0.0.0/24 IETF protocol assignments
        (0xC000_0200, 24),  // 192.0.2.0/24 documentation (TEST-NET-1)
        (0xC058_6300, 24),  // 192.88.99.0/24 6to4 relay anycast
        (0xC0A8_0000, 16),  // 192.168.0.0/16 private
        (0xC612_0000, 15),  // 198.18.0.0/15 benchmarking
        (0xC633_6400, 24),  // 198.51.100.0/24 documentation (TEST-NET-2)
        (0xCB00_7100, 24),  // 203.0.113.0/24 documentation (TEST-NET-3)
        (0xE000_0000, 4),  // 224.0.0.0/4 multicast
        (0xF000_0000, 4),  // 240.0.0.0/4 reserved, and 255.255.255.255 broadcast
    ]

    private static func isPublicIPv6(_ a: [UInt8]) -> Bool {
        func starts(_ prefix: [UInt8]) -> Bool { a.starts(with: prefix) }
        // ::ffff:0:0/96 (IPv4-mapped) and 64:ff9b::/96 (NAT64): the connection goes to the IPv4 address.
        if starts([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) || starts([0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0]) {
            return isPublicIPv4(Array(a[12...]))
        }
        // 2002::/16 (6to4) embeds an IPv4 address in bytes 2–5.
        if starts([0x20, 0x02]) { return isPublicIPv4(Array(a[2..<6])) }
        // Only global unicast; this also excludes ::, ::1, fc00::/7 (unique local), fe80::/10 (link-local),
        // fec0::/10 (site-local), ff00::/8 (multicast), 100::/64 (discard), 64:ff9b:1::/48 (local NAT64)
        // and 5f00::/16 (SRv6).
        guard a[0] & 0xE0 == 0x20 else { return false }
        if starts([0x20, 0x01]) && a[2] & 0xFE == 0 { return false }  // 2001::/23 IETF protocol assignments (Teredo, ORCHID …)
        if starts([0x20, 0x01, 0x0D, 0xB8]) { return false }  // 2001:db8::/32 documentation
        if starts([0x3F, 0xFF]) && a[2] & 0xF0 == 0 { return false }  // 3fff::/20 documentation
        return true
    }
}
