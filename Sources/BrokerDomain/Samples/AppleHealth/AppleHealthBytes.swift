import Foundation

/// Byte comparisons for the scanner, which never builds a String for a name or value it only compares.
enum AppleHealthBytes {
    /// Byte-wise equality that looks at the lengths first (most identifiers share a 24-byte prefix).
    @inline(__always)
    static func equal(_ a: [UInt8], _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBufferPointer { a in
            a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
        }
    }

    /// Whether `b` begins with `prefix`.
    @inline(__always)
    static func hasPrefix(_ b: UnsafeBufferPointer<UInt8>, _ prefix: [UInt8]) -> Bool {
        guard b.count >= prefix.count else { return false }
        return equal(prefix, UnsafeBufferPointer(rebasing: b[0..<prefix.count]))
    }
}
