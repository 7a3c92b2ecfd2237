/// Why `XMLByteScanner` refused a document; its reader says it in its own terms (`AppleHealthImportError`).
enum XMLScanError: Error, Equatable, Sendable {
    /// No bytes at all.
    case empty
    /// The input does not start like XML.
    case notXML
    /// The input is in UTF-16 or UTF-32 (a byte-order mark or NUL bytes): the scanner reads UTF-8 only.
    case notUTF8
    /// XML, but not the document expected: its root element has another name, or something before it says so.
    case wrongRoot
    /// The input ended before the root element closed.
    case truncated
    /// The DOCTYPE declares entities: refused outright, so that nothing is ever expanded.
    case entityDeclarationsNotAllowed
    /// Not well-formed (the reason says where and why).
    case malformed(String)
}
