import Foundation

/// Reads positions in CSV (RFC 4180): a header `at,latitude,longitude`, optionally followed by `elevation`
/// and then `accuracy`, then one position per line; an optional field may be empty.
package enum PositionCSV {
    static let columns = ["at", "latitude", "longitude", "elevation", "accuracy"]

    /// The entries, or a 422 naming the first malformed line (values are checked later, all at once).
    package static func entries(from text: String) -> Result<[PositionBatch.Entry], SampleError> {
        var entries: [PositionBatch.Entry] = []
        var header: [String]?
        // "\r\n" is one Character in Swift: lines are split on the scalar, and a trailing CR is dropped.
        for (index, rawLine) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNumber = index + 1
            let line = String(rawLine.last == "\r" ? rawLine.dropLast() : rawLine)
            if line.isEmpty { continue }
            guard let fields = SampleCSV.fields(of: Substring(line))?.map({ $0.trimmingCharacters(in: .whitespaces) }) else {
                return .failure(.invalid([FieldError(field: "line \(lineNumber)", message: "has an unterminated quoted field")]))
            }
            guard let columns = header else {
                let names = fields.map { $0.lowercased() }
                guard lineNumber == 1, (3...5).contains(names.count), names == Array(Self.columns.prefix(names.count)) else {
                    return .failure(.invalid([FieldError(field: "line 1", message: Self.headerMessage)]))
                }
                header = names
                continue
            }
            guard fields.count == columns.count else {
                return .failure(
                    .invalid([
                        FieldError(
                            field: "line \(lineNumber)",
                            message: "must have \(columns.count) fields (\(columns.joined(separator: ","))), not \(fields.count)")
                    ]))
            }
            // An optional field left empty is absent; any field that is there but no number becomes a value
            // validation refuses (nil where required, NaN where optional), so the answer names it.
            func optional(_ column: Int) -> Double? {
                guard column < fields.count, !fields[column].isEmpty else { return nil }
                return Double(fields[column]) ?? .nan
            }
            entries.append(
                PositionBatch.Entry(
                    at: fields[0], latitude: Double(fields[1]), longitude: Double(fields[2]), elevation: optional(3),
                    accuracy: optional(4), line: lineNumber))
        }
        guard header != nil else { return .failure(.invalid([FieldError(field: "line 1", message: Self.headerMessage)])) }
        return .success(entries)
    }

    static let headerMessage = "must be the header at,latitude,longitude (optionally followed by elevation, then accuracy)"
}
