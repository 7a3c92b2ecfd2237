/// The bytes the XML scanner looks for, and the classes of bytes it tells apart (ASCII only: every byte of a
/// multi-byte UTF-8 sequence is 0x80 or above, so none of these can match inside one).
extension UInt8 {
    static let lessThan = UInt8(ascii: "<")
    static let greaterThan = UInt8(ascii: ">")
    static let question = UInt8(ascii: "?")
    static let exclamation = UInt8(ascii: "!")
    static let slash = UInt8(ascii: "/")
    static let hyphen = UInt8(ascii: "-")
    static let equals = UInt8(ascii: "=")
    static let doubleQuote = UInt8(ascii: "\"")
    static let singleQuote = UInt8(ascii: "'")
    static let ampersand = UInt8(ascii: "&")
    static let semicolon = UInt8(ascii: ";")
    static let percent = UInt8(ascii: "%")
    static let openingBracket = UInt8(ascii: "[")
    static let closingBracket = UInt8(ascii: "]")

    var isXMLWhitespace: Bool { self == 0x20 || self == 0x0A || self == 0x09 || self == 0x0D }
    var isASCIILetter: Bool { (self | 0x20) &- UInt8(ascii: "a") < 26 }
    var isXMLNameStartByte: Bool { isASCIILetter || self == UInt8(ascii: "_") || self == UInt8(ascii: ":") || self >= 0x80 }
    var isXMLNameByte: Bool {
        isXMLNameStartByte || self &- UInt8(ascii: "0") < 10 || self == .hyphen || self == UInt8(ascii: ".")
    }
}
