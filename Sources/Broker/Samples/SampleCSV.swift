import Foundation

/// Reads an upload in CSV (RFC 4180): a header `type,value,at`, then one sample per line.
public enum SampleCSV {
    /// The entries, or a 422 naming the first malformed line (values are checked later, all at once).
    public static func entries(from text: String) -> Result<[SampleBatch.Entry], SampleError> {
        var entries: [SampleBatch.Entry] = []
        var lineNumber = 0
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            if line.isEmpty { continue }
            guard let fields = fields(of: line) else {
                return .failure(.invalid([FieldError(field: "line \(lineNumber)", message: "has an unterminated quoted field")]))
            }
            if lineNumber == 1 {
                guard fields.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) == ["type", "value", "at"] else {
                    return .failure(.invalid([FieldError(field: "line 1", message: "must be the header type,value,at")]))
                }
                continue
            }
            guard fields.count == 3 else {
                return .failure(.invalid([FieldError(field: "line \(lineNumber)", message: "must have 3 fields (type,value,at), not \(fields.count)")]))
            }
            let valueText = fields[1].trimmingCharacters(in: .whitespaces)
            entries.append(SampleBatch.Entry(
                type: fields[0].trimmingCharacters(in: .whitespaces), value: Double(valueText),
                at: fields[2].trimmingCharacters(in: .whitespaces), line: lineNumber))
        }
        if lineNumber == 0 || (entries.isEmpty && lineNumber <= 1 && text.isEmpty) {
            return .failure(.invalid([FieldError(field: "line 1", message: "must be the header type,value,at")]))
        }
        return .success(entries)
    }

    /// Splits one line into fields, honouring double quotes (`""` inside quotes is a quote); nil if a quote is left open.
    static func fields(of line: Substring) -> [String]? {
        var fields: [String] = []
        var current = ""
        var quoted = false
        var iterator = line.makeIterator()
        while let character = iterator.next() {
            if quoted {
                if character == "\"" {
                    // Peek: a doubled quote is a literal quote, otherwise the quoted part ends.
                    var lookahead = iterator
                    if lookahead.next() == "\"" {
                        current.append("\"")
                        iterator = lookahead
                    } else {
                        quoted = false
                    }
                } else {
                    current.append(character)
                }
            } else if character == "\"" {
                quoted = true
            } else if character == "," {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        guard !quoted else { return nil }
        fields.append(current)
        return fields
    }
}
