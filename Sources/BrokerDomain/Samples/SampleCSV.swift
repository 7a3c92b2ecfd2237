import Foundation

/// Reads an upload in CSV (RFC 4180): a header `type,value,at`, then one sample per line.
package enum SampleCSV {
    /// The entries, or a 422 naming the first malformed line (values are checked later, all at once).
    package static func entries(from text: String) -> Result<[SampleBatch.Entry], SampleError> {
        var text = text
        return text.withUTF8 { entries(from: $0) }
    }

    /// Works on UTF-8 bytes: a 10,000-line upload must not cost more than its COPY. Lines without quotes
    /// (all a device writes) are split on commas directly; quoted lines go through the RFC 4180 path.
    static func entries(from bytes: UnsafeBufferPointer<UInt8>) -> Result<[SampleBatch.Entry], SampleError> {
        var entries: [SampleBatch.Entry] = []
        var lineNumber = 0
        var lineStart = 0
        var sawHeader = false
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count, bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            let next = lineEnd + 1
            if lineEnd > lineStart, bytes[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            lineNumber += 1
            defer { lineStart = next }
            if lineEnd == lineStart { continue }
            let line = UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd])
            let fields: [String]
            if line.contains(UInt8(ascii: "\"")) {
                guard let quoted = Self.fields(of: Substring(decoding: line, as: UTF8.self)) else {
                    return .failure(.invalid([FieldError(field: "line \(lineNumber)", message: "has an unterminated quoted field")]))
                }
                fields = quoted
            } else {
                fields = line.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
                    .map { String(decoding: $0, as: UTF8.self) }
            }
            if !sawHeader {
                sawHeader = true
                guard lineNumber == 1, fields.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) == ["type", "value", "at"] else {
                    return .failure(.invalid([FieldError(field: "line 1", message: "must be the header type,value,at")]))
                }
                continue
            }
            guard fields.count == 3 else {
                return .failure(
                    .invalid([FieldError(field: "line \(lineNumber)", message: "must have 3 fields (type,value,at), not \(fields.count)")]))
            }
            entries.append(
                SampleBatch.Entry(
                    type: trimmed(fields[0]), value: Double(trimmed(fields[1])), at: trimmed(fields[2]), line: lineNumber))
        }
        guard sawHeader else {
            return .failure(.invalid([FieldError(field: "line 1", message: "must be the header type,value,at")]))
        }
        return .success(entries)
    }

    /// Trims spaces only when there are any (the common case allocates nothing new).
    private static func trimmed(_ field: String) -> String {
        guard field.first == " " || field.last == " " || field.first == "\t" || field.last == "\t" else { return field }
        return field.trimmingCharacters(in: .whitespaces)
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
