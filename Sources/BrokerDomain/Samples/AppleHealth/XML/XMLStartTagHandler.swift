/// What an `XMLByteScanner` tells its reader: start tags and their attributes. End tags, comments, processing
/// instructions, CDATA and the DOCTYPE are checked and skipped by the scanner itself.
///
/// `scan` is generic over its handler (never `any XMLStartTagHandler`), so within the module it is specialised
/// for the one handler it is used with and these calls are direct, as inlinable as the scanner's own code.
protocol XMLStartTagHandler {
    /// A start tag (or empty-element tag) named `name`, whose `<` is on `line`. Returns whether its attributes are
    /// wanted: then `attribute` is called for each and `startTagEnded` after the last.
    mutating func startTag(_ name: UnsafeBufferPointer<UInt8>, line: Int) -> Bool
    /// An attribute of a wanted start tag: its name, and where its value (still encoded) is in the tag.
    /// `hasReference` when the value holds an entity or character reference (already checked to be valid).
    mutating func attribute(_ name: UnsafeBufferPointer<UInt8>, value: Range<Int>, hasReference: Bool)
    /// The whole wanted tag, without its `<` and `>`: what the ranges given to `attribute` index.
    mutating func startTagEnded(_ tag: UnsafeBufferPointer<UInt8>)
}
