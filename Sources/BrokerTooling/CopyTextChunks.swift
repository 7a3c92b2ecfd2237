import BrokerDomain
import BrokerTestSupport
import Foundation
import NIOCore

/// Rows in PostgreSQL's COPY text format (tab-separated, `\N` for null), cut into chunks of a few hundred KB,
/// each the payload of one `PostgresCopyFromWriter.write`.
///
/// Bytes go through a raw pointer rather than `Array.append` or `ByteBuffer.writeInteger`: the seeder also runs in
/// debug builds (`make run`), where only pointer stores stay cheap, and it writes hundreds of millions of bytes.
final class CopyTextChunks {
    private(set) var chunks: [ByteBuffer] = []
    private(set) var rows = 0
    private let chunkSize: Int
    private let capacity: Int
    private let storage: UnsafeMutablePointer<UInt8>
    private var count = 0

    /// Room past `chunkSize` for the row that crosses it. Rows here are far shorter (the longest, an account, is
    /// under 200 bytes); the only field of unbounded length, text, is checked in `put(text:)`.
    static let maximumRowLength = 4096

    init(chunkSize: Int = 256 * 1024) {
        self.chunkSize = chunkSize
        capacity = chunkSize + Self.maximumRowLength
        storage = .allocate(capacity: capacity)
    }

    deinit { storage.deallocate() }

    /// All rows written so far, as chunks; the builder is empty afterwards.
    func finish() -> [ByteBuffer] {
        flush()
        defer { chunks = [] }
        return chunks
    }

    var byteCount: Int { chunks.reduce(count) { $0 + $1.readableBytes } }

    // MARK: - Fields

    @inline(__always) func tab() { put(UInt8(ascii: "\t")) }

    /// Ends the row; a full chunk is cut only here, so a row never straddles two chunks.
    func endRow() {
        put(UInt8(ascii: "\n"))
        rows += 1
        if count >= chunkSize { flush() }
    }

    func null() {
        put(UInt8(ascii: "\\"))
        put(UInt8(ascii: "N"))
    }

    @inline(__always) func put(_ byte: UInt8) {
        storage[count] = byte
        count += 1
    }

    /// Bytes prepared once and reused on many rows (a person's id).
    func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        memcpy(storage + count, bytes.baseAddress!, bytes.count)
        count += bytes.count
    }

    /// Arbitrary text, escaped for the text format (backslash, tab, newline and carriage return).
    func put(text: String) {
        var text = text
        text.withUTF8 { bytes in
            // Escaping at most doubles the length.
            precondition(count + bytes.count * 2 < capacity, "COPY row too long")
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\\"):
                    put(UInt8(ascii: "\\"))
                    put(UInt8(ascii: "\\"))
                case UInt8(ascii: "\t"):
                    put(UInt8(ascii: "\\"))
                    put(UInt8(ascii: "t"))
                case UInt8(ascii: "\n"):
                    put(UInt8(ascii: "\\"))
                    put(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"):
                    put(UInt8(ascii: "\\"))
                    put(UInt8(ascii: "r"))
                default: put(byte)
                }
            }
        }
    }

    func put(decimal value: Int) {
        var value = value
        if value < 0 {
            put(UInt8(ascii: "-"))
            value = -value
        }
        if value < 10 {
            put(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var digits = 0
        var rest = value
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var index = count + digits - 1
        while value > 0 {
            storage[index] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
            index -= 1
        }
        count += digits
    }

    /// `hundredths / 100` written exactly, with no trailing zeros ("72", "78.4", "7.25"); PostgreSQL reads it as the
    /// double nearest that decimal, which is also what `Double(hundredths) / 100` is in Swift.
    func put(hundredths: Int) {
        precondition(hundredths >= 0)
        put(decimal: hundredths / 100)
        let fraction = hundredths % 100
        guard fraction != 0 else { return }
        put(UInt8(ascii: "."))
        put(UInt8(ascii: "0") + UInt8(fraction / 10))
        if fraction % 10 != 0 { put(UInt8(ascii: "0") + UInt8(fraction % 10)) }
    }

    /// A double that reads back as the same double: whole numbers as integers, the rest in Swift's shortest
    /// round-trip form (PostgreSQL's `float8in` rounds correctly, so it recovers the same bits).
    func put(double value: Double) {
        if value == value.rounded(), abs(value) < 1e15 {
            put(decimal: Int(value))
        } else {
            put(text: value.description)
        }
    }

    /// `YYYY-MM-DD`.
    func put(date: CalendarDate) {
        put(digits: date.year, width: 4)
        put(UInt8(ascii: "-"))
        put(digits: date.month, width: 2)
        put(UInt8(ascii: "-"))
        put(digits: date.day, width: 2)
    }

    /// `YYYY-MM-DD HH:MM:SS+00`: a timestamptz in UTC whatever the session's time zone.
    func put(date: CalendarDate, secondOfDay: Int) {
        put(date: date)
        put(UInt8(ascii: " "))
        put(digits: secondOfDay / 3600, width: 2)
        put(UInt8(ascii: ":"))
        put(digits: secondOfDay / 60 % 60, width: 2)
        put(UInt8(ascii: ":"))
        put(digits: secondOfDay % 60, width: 2)
        put(UInt8(ascii: "+"))
        put(UInt8(ascii: "0"))
        put(UInt8(ascii: "0"))
    }

    private func put(digits value: Int, width: Int) {
        var value = value
        var index = count + width - 1
        while index >= count {
            storage[index] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
            index -= 1
        }
        count += width
    }

    private func flush() {
        guard count > 0 else { return }
        chunks.append(ByteBuffer(bytes: UnsafeBufferPointer(start: storage, count: count)))
        count = 0
    }
}
