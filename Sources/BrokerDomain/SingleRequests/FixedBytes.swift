/// Byte strings made once per download and written for every row (an encoder's pieces that name the
/// download's subject, say), in memory this object owns: `DownloadBytes.append` copies from it without the
/// retain and release an `[UInt8]` costs. Keep the object as long as the pointers it gave out.
final class FixedBytes {
    private var pieces: [UnsafeMutableBufferPointer<UInt8>] = []

    /// A copy of `bytes`, valid while this object lives.
    func keep(_ bytes: [UInt8]) -> UnsafeBufferPointer<UInt8> {
        let piece = Self.copy(bytes)
        pieces.append(piece)
        return UnsafeBufferPointer(piece)
    }

    func keep(_ text: String) -> UnsafeBufferPointer<UInt8> { keep(Array(text.utf8)) }

    /// A copy of `text` for the life of the process (a static table's pieces): never freed, and kept by no
    /// object, so any task may make one.
    static func permanent(_ text: String) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(copy(Array(text.utf8))) }

    private static func copy(_ bytes: [UInt8]) -> UnsafeMutableBufferPointer<UInt8> {
        let piece = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = piece.initialize(from: bytes)
        return piece
    }

    deinit {
        for piece in pieces { piece.deallocate() }
    }
}
