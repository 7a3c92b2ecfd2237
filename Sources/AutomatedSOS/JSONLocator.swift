import Foundation

/// Finds where things are in a JSON text, for error messages: Foundation's `JSONDecoder` says which field
/// is wrong (a coding path) but not on which line, and on Linux says nothing at all about where a syntax
/// error is. A small scanner over the bytes answers both. It builds nothing and is only run after a decoding
/// has failed, so it is written to be simple, not fast.
struct JSONLocator {
    enum Component: Equatable {
        case key(String)
        case index(Int)
    }

    struct SyntaxError: Error {
        var offset: Int
        var reason: String
    }

    private let bytes: [UInt8]
    private var i = 0
    private var path: [Component] = []
    private var target: [Component]?
    private var found: Int?

    private init(_ bytes: [UInt8], target: [Component]?) {
        self.bytes = bytes
        self.target = target
    }

    /// The first syntax error: its line (1-based) and what is wrong; nil if the text is valid JSON.
    static func syntaxError(in data: Data) -> (line: Int, reason: String)? {
        var scanner = JSONLocator(Array(data), target: nil)
        do {
            try scanner.document()
            return nil
        } catch {
            return (scanner.line(at: error.offset), error.reason)
        }
    }

    /// The line (1-based) where the value at `path` starts, or nil if there is none.
    static func line(of path: [Component], in data: Data) -> Int? {
        var scanner = JSONLocator(Array(data), target: path)
        try? scanner.document()
        return scanner.found.map { scanner.line(at: $0) }
    }

    /// `rules[2].threshold`
    static func describe(_ path: [Component]) -> String {
        var text = ""
        for component in path {
            switch component {
            case .key(let key): text += text.isEmpty ? key : ".\(key)"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    private func line(at offset: Int) -> Int {
        1 + bytes[0..<min(offset, bytes.count)].count(where: { $0 == UInt8(ascii: "\n") })
    }

    private mutating func document() throws(SyntaxError) {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        skipSpace()
        try value()
        skipSpace()
        guard i == bytes.count else { throw SyntaxError(offset: i, reason: "unexpected text after the JSON value") }
    }

    private mutating func skipSpace() {
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
    }

    private mutating func value() throws(SyntaxError) {
        if found == nil, path == target { found = i }
        guard i < bytes.count else { throw SyntaxError(offset: i, reason: "unexpected end of the file: a value is missing") }
        switch bytes[i] {
        case UInt8(ascii: "{"): try object()
        case UInt8(ascii: "["): try array()
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        default: throw SyntaxError(offset: i, reason: "unexpected character '\(character(at: i))' where a value should be")
        }
    }

    private mutating func object() throws(SyntaxError) {
        i += 1
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
            i += 1
            return
        }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
                throw SyntaxError(
                    offset: i,
                    reason: i < bytes.count
                        ? "expected a quoted field name, found '\(character(at: i))'" : "unexpected end of the file inside an object")
            }
            let key = try string()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else {
                throw SyntaxError(offset: i, reason: "expected ':' after the field name \"\(key)\"")
            }
            i += 1
            skipSpace()
            path.append(.key(key))
            try value()
            path.removeLast()
            skipSpace()
            guard i < bytes.count else { throw SyntaxError(offset: i, reason: "unexpected end of the file inside an object: '}' is missing") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == UInt8(ascii: "}") {
                i += 1
                return
            }
            throw SyntaxError(offset: i, reason: "expected ',' or '}' after a field, found '\(character(at: i))'")
        }
    }

    private mutating func array() throws(SyntaxError) {
        i += 1
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
            i += 1
            return
        }
        var index = 0
        while true {
            skipSpace()
            path.append(.index(index))
            try value()
            path.removeLast()
            index += 1
            skipSpace()
            guard i < bytes.count else { throw SyntaxError(offset: i, reason: "unexpected end of the file inside a list: ']' is missing") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == UInt8(ascii: "]") {
                i += 1
                return
            }
            throw SyntaxError(offset: i, reason: "expected ',' or ']' after a list element, found '\(character(at: i))'")
        }
    }

    private mutating func string() throws(SyntaxError) -> String {
        let open = i
        i += 1
        var runStart = i
        var text = ""
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") {
                text += String(decoding: bytes[runStart..<i], as: UTF8.self)
                i += 1
                return text
            }
            if byte < 0x20 { throw SyntaxError(offset: i, reason: "a line break or control character inside a string") }
            if byte == UInt8(ascii: "\\") {
                text += String(decoding: bytes[runStart..<i], as: UTF8.self)
                i += 1
                guard i < bytes.count else { break }
                switch bytes[i] {
                case UInt8(ascii: "\""): text += "\""
                case UInt8(ascii: "\\"): text += "\\"
                case UInt8(ascii: "/"): text += "/"
                case UInt8(ascii: "b"): text += "\u{8}"
                case UInt8(ascii: "f"): text += "\u{C}"
                case UInt8(ascii: "n"): text += "\n"
                case UInt8(ascii: "r"): text += "\r"
                case UInt8(ascii: "t"): text += "\t"
                case UInt8(ascii: "u"):
                    guard i + 4 < bytes.count, let code = UInt32(String(decoding: bytes[(i + 1)...(i + 4)], as: UTF8.self), radix: 16)
                    else { throw SyntaxError(offset: i, reason: "a \\u escape needs four hex digits") }
                    text.unicodeScalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
                    i += 4
                default: throw SyntaxError(offset: i, reason: "unknown escape \\\(character(at: i)) in a string")
                }
                i += 1
                runStart = i
                continue
            }
            i += 1
        }
        throw SyntaxError(offset: open, reason: "a string that is never closed")
    }

    private mutating func literal(_ word: String) throws(SyntaxError) {
        guard bytes[i...].starts(with: word.utf8) else {
            throw SyntaxError(offset: i, reason: "unexpected character '\(character(at: i))' where a value should be")
        }
        i += word.utf8.count
    }

    private mutating func number() throws(SyntaxError) {
        let start = i
        func digits() -> Int {
            let first = i
            while i < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) { i += 1 }
            return i - first
        }
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard digits() > 0 else { throw SyntaxError(offset: start, reason: "a malformed number") }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { throw SyntaxError(offset: start, reason: "a malformed number") }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { throw SyntaxError(offset: start, reason: "a malformed number") }
        }
    }

    private func character(at offset: Int) -> String {
        // The whole UTF-8 sequence starting there, so a stray non-ASCII character prints as itself.
        var end = offset + 1
        while end < bytes.count, end - offset < 4, bytes[end] & 0xC0 == 0x80 { end += 1 }
        return String(decoding: bytes[offset..<min(end, bytes.count)], as: UTF8.self)
    }
}
