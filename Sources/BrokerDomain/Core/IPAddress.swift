import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IPv4 or IPv6 address as its bytes, for comparing client addresses with configured networks.
/// An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is the IPv4 address it maps: a dual-stack listener
/// reports IPv4 peers that way, and a proxy configured as `192.0.2.1` must still match.
package struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    let bytes: [UInt8]

    package init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let all = withUnsafeBytes(of: &v6) { Array($0) }
        bytes = all.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] ? Array(all.suffix(4)) : all
    }

    /// One `X-Forwarded-For` entry: an address, possibly with a port (`192.0.2.1:4711`, `[2001:db8::1]:4711`).
    package init?(forwardedEntry raw: some StringProtocol) {
        var text = raw.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            text = String(text[text.index(after: text.startIndex)..<close])
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            text = String(text[..<colon])
        }
        self.init(text)
    }

    /// The block one client is taken to hold, for limits keyed by address: the address itself for IPv4,
    /// its /64 for IPv6 (a single host is routinely given a whole /64, and could otherwise draw a fresh
    /// address, and a fresh limit, for every attempt).
    var clientBlock: String {
        guard bytes.count == 16 else { return description }
        return (IPAddress(bytes: Array(bytes.prefix(8)) + Array(repeating: 0, count: 8)).description) + "/64"
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    package var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let ok = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) } != nil
        return ok ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown"
    }
}
