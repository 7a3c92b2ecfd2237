/// Entity and character references in attribute values. Only the five predefined entities and character
/// references exist here: nothing is ever expanded, and no other entity can be defined (the scanner refuses
/// a DOCTYPE that declares one).
enum XMLReferences {
    /// Throws unless every `&` in `tag[range]` starts a predefined entity or valid character reference.
    static func check(_ tag: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, line: Int) throws(XMLScanError) {
        var k = range.lowerBound
        while k < range.upperBound {
            if tag[k] == .ampersand {
                var semicolon = k + 1
                while semicolon < range.upperBound, semicolon - k <= 12, tag[semicolon] != .semicolon { semicolon += 1 }
                guard semicolon < range.upperBound, tag[semicolon] == .semicolon,
                    resolve(UnsafeBufferPointer(rebasing: tag[k + 1..<semicolon])) != nil
                else {
                    let shown = String(decoding: tag[k..<min(range.upperBound, k + 14)], as: UTF8.self)
                    throw .malformed("an undefined or bad entity reference \(shown) in the tag on line \(line)")
                }
                k = semicolon
            }
            k += 1
        }
    }

    /// The code point of a reference's body (`amp`, `#38`, `#x26`), or nil if it is not predefined or not a valid character.
    static func resolve(_ body: UnsafeBufferPointer<UInt8>) -> UInt32? {
        switch String(decoding: body, as: UTF8.self) {
        case "lt": return 0x3C
        case "gt": return 0x3E
        case "amp": return 0x26
        case "quot": return 0x22
        case "apos": return 0x27
        default: break
        }
        guard body.count >= 2, body[0] == UInt8(ascii: "#") else { return nil }
        let hex = body[1] == UInt8(ascii: "x")
        let digits = body[(hex ? 2 : 1)...]
        guard !digits.isEmpty, digits.count <= 8,
            let code = UInt32(String(decoding: digits, as: UTF8.self), radix: hex ? 16 : 10),
            code == 0x9 || code == 0xA || code == 0xD || (0x20...0xD7FF).contains(code)
                || (0xE000...0xFFFD).contains(code) || (0x10000...0x10FFFF).contains(code)
        else { return nil }
        return code
    }

    /// Decodes the (already checked) references of `range` in place; the decoded text is never longer than the encoded.
    static func decode(in tag: inout [UInt8], _ range: Range<Int>) -> Range<Int> {
        var read = range.lowerBound
        var write = range.lowerBound
        while read < range.upperBound {
            guard tag[read] == .ampersand,
                let semicolon = tag[read..<range.upperBound].firstIndex(of: .semicolon),
                let code = tag.withUnsafeBufferPointer({ resolve(UnsafeBufferPointer(rebasing: $0[read + 1..<semicolon])) }),
                let scalar = Unicode.Scalar(code)
            else {
                tag[write] = tag[read]
                read += 1
                write += 1
                continue
            }
            for byte in UTF8.encode(scalar)! {
                tag[write] = byte
                write += 1
            }
            read = semicolon + 1
        }
        return range.lowerBound..<write
    }
}
