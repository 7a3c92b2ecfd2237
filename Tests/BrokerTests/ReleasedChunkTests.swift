import Foundation
import NIOCore
import Testing

@testable import BrokerDomain

/// The download's chunk arrays, read from PostgreSQL's binary array form by hand (`ReleasedChunk`): what
/// the chunk statement writes is read exactly, and anything else is refused rather than misread.
@Suite("Released chunk")
struct ReleasedChunkTests {
    /// `array_send`'s form of a one-dimensional array whose elements are `width` bytes each (nil: NULL).
    static func array(_ elements: [[UInt8]?], type: UInt32, dimensions: Int32 = 1) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(elements.isEmpty ? 0 : dimensions)
        buffer.writeInteger(Int32(elements.contains { $0 == nil } ? 1 : 0))
        buffer.writeInteger(type)
        guard !elements.isEmpty else { return buffer }
        for _ in 0..<dimensions {
            buffer.writeInteger(Int32(elements.count))
            buffer.writeInteger(Int32(1))
        }
        for element in elements {
            if let element {
                buffer.writeInteger(Int32(element.count))
                buffer.writeBytes(element)
            } else {
                buffer.writeInteger(Int32(-1))
            }
        }
        return buffer
    }

    static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }

    @Test("codes, times (microseconds, before and after 2000) and values read exactly")
    func reads() throws {
        let times: [Int64] = [0, -1, 1_735_689_607_000_001, -946_684_800_000_000 - 123_456]
        let chunk = try ReleasedChunk(
            codes: Self.array([1, 2, 3, 17].map { Self.bigEndian(Int16($0)) }, type: 21),
            times: Self.array(times.map { Self.bigEndian($0 - ReleasedChunk.postgresEpoch) }, type: 1184),
            values: Self.array([72.5, 0.1, -3, 1e300].map { Self.bigEndian($0.bitPattern) }, type: 701),
            lastArrival: 9)
        #expect(chunk.codes == [1, 2, 3, 17])
        #expect(chunk.times == times)
        #expect(chunk.values == [72.5, 0.1, -3, 1e300])
        #expect(chunk.lastArrival == 9)
        let empty = try ReleasedChunk(
            codes: Self.array([], type: 21), times: Self.array([], type: 1184), values: Self.array([], type: 701), lastArrival: 0)
        #expect(empty.codes.isEmpty && empty.times.isEmpty && empty.values.isEmpty)
    }

    @Test("a NULL element, a second dimension, a wrong width, a short buffer or arrays of different lengths are refused")
    func refuses() throws {
        let codes = Self.array([Self.bigEndian(Int16(1)), Self.bigEndian(Int16(2))], type: 21)
        let times = Self.array([Self.bigEndian(Int64(0)), Self.bigEndian(Int64(1))], type: 1184)
        let values = Self.array([Self.bigEndian(Double(1).bitPattern), Self.bigEndian(Double(2).bitPattern)], type: 701)
        _ = try ReleasedChunk(codes: codes, times: times, values: values, lastArrival: 2)
        let withNull = Self.array([Self.bigEndian(Int16(1)), nil], type: 21)
        #expect(throws: ReleasedChunk.MalformedChunk.self) { try ReleasedChunk(codes: withNull, times: times, values: values, lastArrival: 2) }
        let twoDimensions = Self.array([Self.bigEndian(Int16(1)), Self.bigEndian(Int16(2))], type: 21, dimensions: 2)
        #expect(throws: ReleasedChunk.MalformedChunk.self) {
            try ReleasedChunk(codes: twoDimensions, times: times, values: values, lastArrival: 2)
        }
        let wide = Self.array([Self.bigEndian(Int32(1)), Self.bigEndian(Int32(2))], type: 23)
        #expect(throws: ReleasedChunk.MalformedChunk.self) { try ReleasedChunk(codes: wide, times: times, values: values, lastArrival: 2) }
        var short = codes
        short.moveWriterIndex(to: short.writerIndex - 1)
        #expect(throws: ReleasedChunk.MalformedChunk.self) { try ReleasedChunk(codes: short, times: times, values: values, lastArrival: 2) }
        let one = Self.array([Self.bigEndian(Int16(1))], type: 21)
        #expect(throws: ReleasedChunk.MalformedChunk.self) { try ReleasedChunk(codes: one, times: times, values: values, lastArrival: 2) }
        #expect(throws: ReleasedChunk.MalformedChunk.self) { try ReleasedChunk(codes: nil, times: times, values: values, lastArrival: 2) }
    }
}
