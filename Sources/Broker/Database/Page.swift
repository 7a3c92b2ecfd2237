import Foundation

/// An opaque keyset cursor: the sort key (a time) and id of the last row of the previous page.
public struct PageCursor: Sendable, Equatable {
    public var time: Date
    public var id: UUID

    public init(time: Date, id: UUID) {
        self.time = time
        self.id = id
    }

    /// Parses what `text` produced; nil for anything else (the caller answers 422).
    public init?(text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let decoded = String(data: data, encoding: .utf8) else { return nil }
        let parts = decoded.split(separator: "|")
        guard parts.count == 2, let micros = Int64(parts[0]), let id = UUID(uuidString: String(parts[1])) else {
            return nil
        }
        self.init(time: Date(timeIntervalSince1970: Double(micros) / 1_000_000), id: id)
    }

    public var text: String {
        let micros = Int64((time.timeIntervalSince1970 * 1_000_000).rounded())
        return Data("\(micros)|\(id.uuidString.lowercased())".utf8).base64URLEncoded()
    }
}

/// A page of rows and the cursor of the next page (nil on the last page).
public struct Page<Row: Sendable>: Sendable {
    public var rows: [Row]
    public var nextCursor: String?

    /// `rows` holds up to `limit + 1` rows: the extra one only says another page exists.
    init(rows: [Row], limit: Int, cursor: (Row) -> PageCursor) {
        self.rows = Array(rows.prefix(limit))
        self.nextCursor = rows.count > limit ? self.rows.last.map { cursor($0).text } : nil
    }
}
