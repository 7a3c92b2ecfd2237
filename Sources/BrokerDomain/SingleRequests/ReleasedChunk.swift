import Foundation
import NIOCore

/// A chunk of released samples in arrival order, as three parallel arrays.
struct ReleasedChunk: Sendable {
    var codes: [Int16]
    /// Microseconds since 1970, exactly as PostgreSQL holds them (a `Date` would round through a `Double`).
    var times: [Int64]
    var values: [Double]
    var lastArrival: Int64

    /// Reads the chunk statement's three arrays in PostgreSQL's binary form. PostgresNIO's generic array
    /// decoding looked up type metadata for every element, the largest single cost of a download in the
    /// profile; these arrays are always one-dimensional and without NULLs, so each element is a length and
    /// a fixed-width big-endian value.
    init(codes: ByteBuffer?, times: ByteBuffer?, values: ByteBuffer?, lastArrival: Int64) throws {
        self.codes = try Self.elements(of: codes, width: 2) { raw, offset in
            Int16(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int16.self))
        }
        self.times = try Self.elements(of: times, width: 8) { raw, offset in
            Int64(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int64.self)) + Self.postgresEpoch
        }
        self.values = try Self.elements(of: values, width: 8) { raw, offset in
            Double(bitPattern: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
        }
        guard self.times.count == self.codes.count, self.values.count == self.codes.count else { throw MalformedChunk() }
        self.lastArrival = lastArrival
    }

    init(codes: [Int16], times: [Int64], values: [Double], lastArrival: Int64) {
        self.codes = codes
        self.times = times
        self.values = values
        self.lastArrival = lastArrival
    }

    /// 2000-01-01T00:00:00Z, where PostgreSQL's timestamps count from, in microseconds since 1970.
    static let postgresEpoch: Int64 = 946_684_800_000_000

    /// The arrays were not what the chunk statement writes (our bug, or another server version's form).
    struct MalformedChunk: Error {}

    /// `array_send`'s form: dimensions, a has-NULLs flag, the element type, each dimension's length and lower
    /// bound, then every element as its length and its bytes. An empty array has no dimensions.
    private static func elements<Element>(
        of cell: ByteBuffer?, width: Int, _ element: (UnsafeRawBufferPointer, Int) -> Element
    ) throws -> [Element] {
        guard let cell else { throw MalformedChunk() }
        return try cell.withUnsafeReadableBytes { raw -> [Element] in
            guard raw.count >= 12 else { throw MalformedChunk() }
            let dimensions = Int32(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: Int32.self))
            if dimensions == 0 { return [] }
            guard dimensions == 1, raw.count >= 20 else { throw MalformedChunk() }
            let count = Int(Int32(bigEndian: raw.loadUnaligned(fromByteOffset: 12, as: Int32.self)))
            // Every element has the width of its type: a NULL (length -1) would not fit this size.
            guard count >= 0, raw.count == 20 + count * (4 + width) else { throw MalformedChunk() }
            for index in 0..<count where Int32(bigEndian: raw.loadUnaligned(fromByteOffset: 20 + index * (4 + width), as: Int32.self)) != width {
                throw MalformedChunk()
            }
            return [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
                for index in 0..<count { buffer.initializeElement(at: index, to: element(raw, 24 + index * (4 + width))) }
                initialized = count
            }
        }
    }
}
