/// Uniform integers below a bound, exactly, from a generator's 64-bit words.
///
/// The standard library's `next(upperBound:)` is unbiased too (Lemire's method), but its algorithm is not
/// promised to stay the same; owning these few lines keeps seeded test streams identical across toolchains
/// and keeps the whole sampler's correctness argument in this folder.
enum UniformInteger {
    /// Uniform on 0..<bound (bound > 0), by rejection: draw as many bits as `bound - 1` has and retry when the
    /// draw is ≥ bound. Every kept value is equally likely (no modulo bias); a draw is kept with probability
    /// above 1/2, so the expected number of tries is below 2.
    static func below(_ bound: UInt128, using generator: inout some RandomNumberGenerator) -> UInt128 {
        precondition(bound > 0, "a uniform draw needs a non-empty range")
        let largest = bound - 1
        if largest == 0 { return 0 }
        let bits = UInt128.bitWidth - largest.leadingZeroBitCount
        let mask: UInt128 = bits == UInt128.bitWidth ? .max : (1 << bits) - 1
        while true {
            let low: UInt64 = generator.next()
            var draw = UInt128(low)
            if bits > UInt64.bitWidth {
                let high: UInt64 = generator.next()
                draw |= UInt128(high) << UInt64.bitWidth
            }
            draw &= mask
            if draw <= largest { return draw }
        }
    }

    /// A fair coin: the lowest bit of one word.
    static func coin(using generator: inout some RandomNumberGenerator) -> Bool {
        let word: UInt64 = generator.next()
        return word & 1 == 1
    }
}
