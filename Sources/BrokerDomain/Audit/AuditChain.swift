import Crypto
import Foundation

/// The audit log's hash chain, recomputed here in Swift rather than trusted to the SQL functions that
/// build it: whoever holds the database can replace `audit_event_canonical` with one that lies, but not
/// this code. Each event's hash is SHA-256(previous hash ‖ canonical event), with the canonical event the
/// same bytes `audit_event_canonical` (0001_accounts.sql) produces: its fields joined by U+001F.
package enum AuditChain {
    /// The `prev_hash` of event 1.
    package static let genesis = [UInt8](repeating: 0, count: 32)

    /// One stored event, with every field exactly as the canonical form spells it: `at` as
    /// `YYYY-MM-DDTHH:MM:SS.ffffffZ` in UTC, `requestID` as lower-case text, `details` as jsonb's own text.
    package struct Link: Sendable {
        package var seq: Int64
        package var at: String
        package var actorID: String?
        package var actorRole: String
        package var action: String
        package var requestID: String?
        package var subject: String?
        package var details: String
        package var prevHash: [UInt8]
        package var hash: [UInt8]
    }

    package static func canonical(_ link: Link) -> [UInt8] {
        let fields = [
            String(link.seq), link.at, link.actorID ?? "", link.actorRole, link.action, link.requestID ?? "",
            link.subject ?? "", link.details,
        ]
        return Array(fields.joined(separator: "\u{1F}").utf8)
    }

    /// SHA-256(`previous` ‖ canonical event).
    package static func hash(_ link: Link, after previous: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: previous)
        hasher.update(data: canonical(link))
        return Array(hasher.finalize())
    }

    /// Walks the chain in order, one link at a time, checking each against the one before.
    package struct Walker: Sendable {
        package private(set) var events: Int64 = 0
        package private(set) var lastHash: [UInt8] = AuditChain.genesis

        package init() {}

        /// Continues after an earlier verified point.
        package init(events: Int64, lastHash: [UInt8]) { (self.events, self.lastHash) = (events, lastHash) }

        /// False if `link` is not the next event: its number, its link to the previous hash, or its own hash.
        package mutating func accept(_ link: Link) -> Bool {
            guard link.seq == events + 1, link.prevHash == lastHash, hash(link, after: lastHash) == link.hash else {
                return false
            }
            events = link.seq
            lastHash = link.hash
            return true
        }
    }
}

extension Array where Element == UInt8 {
    /// Lower-case hexadecimal, as the API and the checkpoints spell hashes.
    var hexText: String { map { String(format: "%02x", $0) }.joined() }

    init?(hexText text: String) {
        guard text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self = bytes
    }
}
