#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The operating system's CSPRNG read 4 KiB at a time, for samplers that need thousands of words per draw
/// (`ExponentialMechanism` over a fine grid). `SystemRandomNumberGenerator` makes one getrandom(2) call
/// per 64-bit word, about 0.7 µs each here: a 180-cell release with three percentiles per cell spent most
/// of a second in those calls. A read of /dev/urandom returns the same kernel CSPRNG's output (on Linux
/// since 5.6 it is getrandom's pool, and it never blocks once seeded), 512 words per system call.
///
/// Made per draw and never shared, so it needs no lock and its buffer dies with the draw. If /dev/urandom
/// cannot be read (a sandbox without it), every word comes from `SystemRandomNumberGenerator` instead.
struct BufferedSystemRandom: RandomNumberGenerator {
    private var words = [UInt64](repeating: 0, count: 512)
    private var position = 512
    private var fallback = SystemRandomNumberGenerator()

    /// Opened once per process, read-only, closed on exec; -1 when unavailable.
    private static let device: Int32 = open("/dev/urandom", O_RDONLY | O_CLOEXEC)

    mutating func next() -> UInt64 {
        if position == words.count && !refill() { return fallback.next() }
        defer { position += 1 }
        return words[position]
    }

    /// Fills the whole buffer; false (and the buffer left unused) on any short or failed read.
    private mutating func refill() -> Bool {
        guard Self.device >= 0 else { return false }
        let wanted = words.count * MemoryLayout<UInt64>.size
        let count = words.withUnsafeMutableBytes { read(Self.device, $0.baseAddress, wanted) }
        guard count == wanted else { return false }
        position = 0
        return true
    }
}
