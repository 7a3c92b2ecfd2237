import CZstd

/// One zstd frame (RFC 8878), written a piece at a time: each piece comes back flushed, so the client can
/// decompress everything sent so far while the download goes on, and the frame's end carries a checksum of
/// the whole content, so a body cut short or damaged on the way fails to decompress instead of reading as
/// a shorter download. One frame a response; not for use from two tasks at once.
final class ZstdFrameCompressor {
    private let context: OpaquePointer
    private var scratch: [UInt8]

    /// Level 1: a FHIR download's Observations repeat nearly every byte, so the fastest level already shrinks
    /// them about a hundredfold, at about 4 GB/s on this project's 2-core machine (`bench/README.md`).
    init(level: Int32 = 1) throws(ZstdFailure) {
        guard let context = ZSTD_createCCtx() else { throw ZstdFailure(message: "out of memory") }
        self.context = context
        scratch = [UInt8](repeating: 0, count: ZSTD_CStreamOutSize())
        try check(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level))
        try check(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1))
        // A 512 KiB window, level 1's own: RFC 9659 asks HTTP's zstd to stay within 8 MB, which a higher
        // level would pass for a large body.
        try check(ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, 19))
    }

    deinit { ZSTD_freeCCtx(context) }

    /// `piece` compressed and flushed; with `end`, the frame's end after it (then the compressor is done).
    func compress(_ piece: ArraySlice<UInt8>, end: Bool = false) throws(ZstdFailure) -> [UInt8] {
        var output: [UInt8] = []
        let mode = end ? ZSTD_e_end : ZSTD_e_flush
        let outcome: Result<Void, ZstdFailure> = piece.withUnsafeBytes { raw in
            var source = ZSTD_inBuffer(src: raw.baseAddress, size: raw.count, pos: 0)
            // With a flush or an end, zstd answers 0 once every byte given was taken and written out; until
            // then, what it still holds to write.
            while true {
                let (left, written) = scratch.withUnsafeMutableBytes { buffer in
                    var sink = ZSTD_outBuffer(dst: buffer.baseAddress, size: buffer.count, pos: 0)
                    let left = ZSTD_compressStream2(context, &sink, &source, mode)
                    return (left, sink.pos)
                }
                if ZSTD_isError(left) != 0 { return .failure(ZstdFailure(code: left)) }
                output.append(contentsOf: scratch[..<written])
                if left == 0 { return .success(()) }
            }
        }
        try outcome.get()
        return output
    }

    private func check(_ result: Int) throws(ZstdFailure) {
        if ZSTD_isError(result) != 0 { throw ZstdFailure(code: result) }
    }
}

/// What libzstd said went wrong (only an allocation can fail at the parameters used here).
struct ZstdFailure: Error, CustomStringConvertible {
    var message: String

    init(message: String) { self.message = message }
    init(code: Int) { message = String(cString: ZSTD_getErrorName(code)) }

    var description: String { "zstd: \(message)" }
}
