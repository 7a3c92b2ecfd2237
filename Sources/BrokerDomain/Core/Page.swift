import Foundation

/// An opaque keyset cursor: the sort key (a time) and tie-breaker (an id, a type …) of the last row of the previous page.
package struct PageCursor: Sendable, Equatable {
    package var time: Date
    package var key: String

    package init(time: Date, key: String) {
        self.time = time
        self.key = key
    }

    package init(time: Date, id: UUID) {
        self.init(time: time, key: id.uuidString.lowercased())
    }

    /// The tie-breaker as an id, for lists ordered by (time, id).
    package var id: UUID? { UUID(uuidString: key) }

    /// Parses what `text` produced; nil for anything else (the caller answers 422).
    package init?(text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let decoded = String(data: data, encoding: .utf8) else { return nil }
        let parts = decoded.split(separator: "|", maxSplits: 1)
        guard parts.count == 2, let micros = Int64(parts[0]), !parts[1].isEmpty else { return nil }
        self.init(time: Date(timeIntervalSince1970: Double(micros) / 1_000_000), key: String(parts[1]))
    }

    package var text: String {
        let micros = Int64((time.timeIntervalSince1970 * 1_000_000).rounded())
        return Data("\(micros)|\(key)".utf8).base64URLEncoded()
    }
}

/// A page of rows and the cursor of the next page (nil on the last page).
package struct Page<Row: Sendable>: Sendable {
    package var rows: [Row]
    package var nextCursor: String?

    /// `rows` holds up to `limit + 1` rows: the extra one only says another page exists.
    init(rows: [Row], limit: Int, cursor: (Row) -> PageCursor) {
        self.rows = Array(rows.prefix(limit))
        self.nextCursor = rows.count > limit ? self.rows.last.map { cursor($0).text } : nil
    }
}

/// `?limit=&cursor=` as the contract gives them to every list: limit 1–1000 (default 100), and a cursor
/// only as this API gave it out. Problems are added to `errors`, beside the list's other parameters.
package enum PageRequest {
    package static let defaultLimit = 100
    package static let limits = 1...1000

    package static func read<Cursor>(
        limit: Int?, cursor: String?, parse: (String) -> Cursor?, into errors: inout [FieldError]
    ) -> (limit: Int, cursor: Cursor?) {
        let limit = limit ?? defaultLimit
        if !limits.contains(limit) {
            errors.append(FieldError(field: "limit", message: "must be \(limits.lowerBound)–\(limits.upperBound)"))
        }
        let parsed = cursor.flatMap(parse)
        if cursor != nil, parsed == nil {
            errors.append(FieldError(field: "cursor", message: "is not a cursor this API gave out"))
        }
        return (limit, parsed)
    }
}
