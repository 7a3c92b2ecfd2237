#if canImport(CZlib)
    import CZlib
    import Foundation

    /// The iPhone's export.zip, read just enough to stream its `apple_health_export/export.xml`: the central directory is
    /// read, the entry's data is inflated chunk by chunk, and nothing inflated ever touches the disk.
    ///
    /// Zip bombs are refused: before inflating, an entry declaring more than `maximumUncompressedSize` or a compression
    /// ratio above `maximumCompressionRatio`; while inflating, as soon as the output exceeds the declared size.
    package struct AppleHealthArchive: Sendable {
        /// 8 GiB: the largest export.xml accepted from an archive.
        package static let defaultMaximumUncompressedSize: UInt64 = 8 << 30
        /// Text like Apple's deflates about 20:1; 1000:1 is only reached by crafted data.
        package static let maximumCompressionRatio: UInt64 = 1000
        /// The central directory is read into memory; an honest export.zip's is far below this.
        static let maximumCentralDirectoryBytes = 64 << 20

        /// One file of the archive, as its central directory describes it.
        package struct Entry: Sendable, Equatable {
            package var path: String
            /// 0 stored, 8 deflated.
            package var method: UInt16
            package var compressedSize: UInt64
            package var uncompressedSize: UInt64
            package var crc32: UInt32
            var flags: UInt16
            var localHeaderOffset: UInt64
            var disk: UInt16

            /// Path components: `apple_health_export/export.xml` is 2.
            var depth: Int { path.split(separator: "/").count }
            /// The folder the entry is in, with its trailing slash (empty at the top).
            var folder: String { path.lastIndex(of: "/").map { String(path[...$0]) } ?? "" }
        }

        package let url: URL
        /// The entry streamed by `openExportXML()` (see `export(among:)`).
        package let exportXML: Entry
        /// The GPS tracks of workouts (`workout-routes/route_….gpx`), in path order.
        package let workoutRoutes: [Entry]
        package let maximumUncompressedSize: UInt64
        /// A route is a few hundred kilobytes (a marathon at a fix a second, about 2 MB); one beyond this is not a phone's.
        static let maximumRouteSize: UInt64 = 16 << 20
        /// All routes together: years of daily runs fit, a zip bomb of many routes does not.
        static let maximumRoutesSize: UInt64 = 2 << 30

        /// Reads the archive's directory and checks its export.xml entry, without inflating anything.
        package init(contentsOf url: URL, maximumUncompressedSize: UInt64 = Self.defaultMaximumUncompressedSize)
            throws(AppleHealthImportError)
        {
            self.url = url
            self.maximumUncompressedSize = maximumUncompressedSize
            let file = try AppleHealthUploadFile(url.path)
            defer { file.closeFile() }
            let entries = try Self.centralDirectory(file)
            let entry = try Self.export(among: entries)
            try Self.check(entry, maximumUncompressedSize: maximumUncompressedSize)
            exportXML = entry
            workoutRoutes = Self.routes(among: entries)
            for route in workoutRoutes { try Self.check(route, maximumUncompressedSize: Self.maximumRouteSize) }
            guard workoutRoutes.reduce(0, { $0 + $1.uncompressedSize }) <= Self.maximumRoutesSize else { throw .zipBomb }
        }

        /// The `.gpx` files of a `workout-routes/` folder (wherever the export put it), in path order.
        static func routes(among entries: [Entry]) -> [Entry] {
            entries.filter {
                !$0.path.hasPrefix("__MACOSX/") && $0.path.lowercased().hasSuffix(".gpx")
                    && ($0.path.hasPrefix("workout-routes/") || $0.path.contains("/workout-routes/"))
            }.sorted { $0.path < $1.path }
        }

        /// The entry holding the export: the shallowest `export.xml`; failing that, as an iPhone in another language
        /// names it (`exportar.xml`, `exporter.xml` …), the one `.xml` file beside the clinical documents
        /// (`*_cda.xml`) in `apple_health_export/` or wherever those are. Several candidates are refused by name:
        /// guessing could import the wrong file.
        static func export(among entries: [Entry]) throws(AppleHealthImportError) -> Entry {
            // `__MACOSX/` holds a Mac's resource forks, not data.
            let files = entries.filter { !$0.path.hasPrefix("__MACOSX/") && !$0.path.hasSuffix("/") }
            let exact = files.filter { $0.path == "export.xml" || $0.path.hasSuffix("/export.xml") }
            if let entry = exact.min(by: { $0.depth < $1.depth }) { return entry }
            let cda = files.filter { $0.path.lowercased().hasSuffix("_cda.xml") }
            let folders = Set(cda.map(\.folder) + ["apple_health_export/"])
            let candidates = files.filter {
                folders.contains($0.folder) && $0.path.lowercased().hasSuffix(".xml") && !$0.path.lowercased().hasSuffix("_cda.xml")
            }
            guard candidates.count <= 1 else { throw .severalExports(candidates.map(\.path).sorted()) }
            guard let entry = candidates.first else { throw .noExportXML(found: files.map(\.path)) }
            return entry
        }

        /// Whether the file starts like a ZIP archive (a local file header, or the end record of an empty archive).
        package static func isZip(_ prefix: some Collection<UInt8>) -> Bool {
            let signature = Array(prefix.prefix(4))
            return signature == [0x50, 0x4B, 0x03, 0x04] || signature == [0x50, 0x4B, 0x05, 0x06]
        }

        /// Opens the export.xml entry for streaming, `chunkSize` inflated bytes at a time.
        package func openExportXML(chunkSize: Int = 64 * 1024) throws(AppleHealthImportError) -> EntryReader {
            try open(exportXML, limit: maximumUncompressedSize, chunkSize: chunkSize)
        }

        /// A workout route's whole text (a route is small: `maximumRouteSize` at most).
        package func routeBytes(_ route: Entry) throws(AppleHealthImportError) -> [UInt8] {
            let reader = try open(route, limit: Self.maximumRouteSize, chunkSize: 64 * 1024)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Int(route.uncompressedSize))
            while let chunk = try reader.next() { bytes += chunk }
            return bytes
        }

        private func open(_ entry: Entry, limit: UInt64, chunkSize: Int) throws(AppleHealthImportError) -> EntryReader {
            let file = try AppleHealthUploadFile(url.path)  // closed by the reader, or on deinit if we throw
            let header = try file.read(at: entry.localHeaderOffset, count: 30)
            guard header.uint32(at: 0) == 0x0403_4B50 else { throw .damagedZip("\(entry.path)'s local header is missing") }
            let dataStart = entry.localHeaderOffset + 30 + UInt64(header.uint16(at: 26)) + UInt64(header.uint16(at: 28))
            guard dataStart + entry.compressedSize <= file.size else {
                throw .damagedZip("\(entry.path) extends past the end of the file: the file was probably cut short")
            }
            return try EntryReader(file: file, entry: entry, dataStart: dataStart, limit: limit, chunkSize: chunkSize)
        }

        private static func check(_ entry: Entry, maximumUncompressedSize: UInt64) throws(AppleHealthImportError) {
            // Bit 0: encrypted; bit 6: strong encryption.
            guard entry.flags & 0x41 == 0 else { throw .unsupportedZip("encryption") }
            guard entry.disk == 0 else { throw .unsupportedZip("several disks") }
            guard entry.compressedSize != 0xFFFF_FFFF, entry.uncompressedSize != 0xFFFF_FFFF,
                entry.localHeaderOffset != 0xFFFF_FFFF
            else { throw .unsupportedZip("ZIP64 (an export.xml over 4 GiB)") }
            guard entry.method == 0 || entry.method == 8 else { throw .unsupportedZip("compression method \(entry.method)") }
            guard entry.uncompressedSize <= maximumUncompressedSize else { throw .zipBomb }
            guard entry.uncompressedSize <= max(entry.compressedSize, 1) * maximumCompressionRatio else { throw .zipBomb }
            if entry.method == 0 && entry.compressedSize != entry.uncompressedSize {
                throw .damagedZip("the export's sizes disagree")
            }
        }

        /// Finds the end-of-central-directory record in the last 64 KiB and reads every central directory header.
        private static func centralDirectory(_ file: AppleHealthUploadFile) throws(AppleHealthImportError) -> [Entry] {
            let tailSize = min(file.size, 22 + 0xFFFF)
            let tail = try file.read(at: file.size - tailSize, count: Int(tailSize))
            var end: Int?
            var k = tail.count - 22
            while k >= 0 {
                if tail.uint32(at: k) == 0x0605_4B50, k + 22 + Int(tail.uint16(at: k + 20)) <= tail.count {
                    end = k
                    break
                }
                k -= 1
            }
            guard let end else {
                throw isZip(try file.read(at: 0, count: Int(min(file.size, 4))))
                    ? .damagedZip("it has no central directory: the file was probably cut short") : .notZip
            }
            let disk = tail.uint16(at: end + 4)
            let directoryDisk = tail.uint16(at: end + 6)
            let entriesOnDisk = tail.uint16(at: end + 8)
            let entries = tail.uint16(at: end + 10)
            let directorySize = UInt64(tail.uint32(at: end + 12))
            let directoryOffset = UInt64(tail.uint32(at: end + 16))
            guard entries != 0xFFFF, directorySize != 0xFFFF_FFFF, directoryOffset != 0xFFFF_FFFF else {
                throw .unsupportedZip("ZIP64")
            }
            guard disk == 0, directoryDisk == 0, entriesOnDisk == entries else { throw .unsupportedZip("several disks") }
            let endOffset = file.size - tailSize + UInt64(end)
            guard directoryOffset + directorySize <= endOffset else {
                throw .damagedZip("its central directory lies outside the file: the file was probably cut short")
            }
            guard directorySize <= maximumCentralDirectoryBytes else {
                throw .unsupportedZip("a central directory over \(maximumCentralDirectoryBytes >> 20) MiB")
            }
            let directory = try file.read(at: directoryOffset, count: Int(directorySize))
            var result: [Entry] = []
            var p = 0
            for _ in 0..<entries {
                guard p + 46 <= directory.count, directory.uint32(at: p) == 0x0201_4B50 else {
                    throw .damagedZip("its central directory is damaged")
                }
                let nameLength = Int(directory.uint16(at: p + 28))
                let extraLength = Int(directory.uint16(at: p + 30))
                let commentLength = Int(directory.uint16(at: p + 32))
                guard p + 46 + nameLength <= directory.count else { throw .damagedZip("its central directory is damaged") }
                result.append(
                    Entry(
                        path: String(decoding: directory[p + 46..<p + 46 + nameLength], as: UTF8.self),
                        method: directory.uint16(at: p + 10),
                        compressedSize: UInt64(directory.uint32(at: p + 20)),
                        uncompressedSize: UInt64(directory.uint32(at: p + 24)),
                        crc32: directory.uint32(at: p + 16),
                        flags: directory.uint16(at: p + 8),
                        localHeaderOffset: UInt64(directory.uint32(at: p + 42)),
                        disk: directory.uint16(at: p + 34)
                    ))
                p += 46 + nameLength + extraLength + commentLength
            }
            return result
        }

        /// Streams one entry of a ZIP archive, inflating it a chunk at a time and checking its size and CRC-32 as it goes.
        /// Owns an open file and zlib's state: use it from one task at a time.
        package final class EntryReader {
            private let file: AppleHealthUploadFile
            private let entry: Entry
            private let limit: UInt64
            private let chunkSize: Int
            private var nextInput: UInt64
            private var remainingInput: UInt64
            private var produced: UInt64 = 0
            private var crc: UInt = 0
            private var finished = false
            /// The first error, thrown again by every later call.
            private var failure: AppleHealthImportError?
            /// zlib keeps a pointer to its stream, so the stream and the buffers it points into must not move.
            private let stream: UnsafeMutablePointer<z_stream>
            private let input: UnsafeMutableBufferPointer<UInt8>
            private let output: UnsafeMutableBufferPointer<UInt8>

            fileprivate init(
                file: AppleHealthUploadFile, entry: Entry, dataStart: UInt64, limit: UInt64, chunkSize: Int
            ) throws(AppleHealthImportError) {
                self.file = file
                self.entry = entry
                self.limit = limit
                self.chunkSize = max(chunkSize, 1024)
                nextInput = dataStart
                remainingInput = entry.compressedSize
                stream = .allocate(capacity: 1)
                stream.initialize(to: z_stream())
                input = .allocate(capacity: self.chunkSize)
                output = .allocate(capacity: self.chunkSize)
                if entry.method == 8 {
                    // Negative window bits: raw deflate, as ZIP stores it (no zlib header).
                    let status = inflateInit2_(stream, -MAX_WBITS, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
                    guard status == Z_OK else { throw .unreadable("zlib could not start (\(status))") }
                }
            }

            deinit {
                if entry.method == 8 { inflateEnd(stream) }
                stream.deinitialize(count: 1)
                stream.deallocate()
                input.deallocate()
                output.deallocate()
                file.closeFile()
            }

            /// Inflated bytes processed so far.
            package var bytesRead: UInt64 { produced }
            /// Where in the archive file reading has reached (progress is told in bytes of the upload).
            package var fileOffset: UInt64 { nextInput }

            /// The next inflated chunk, or nil after the last one (whose size and CRC-32 were checked).
            package func next() throws(AppleHealthImportError) -> [UInt8]? {
                if let failure { throw failure }
                guard !finished else { return nil }
                do {
                    return entry.method == 0 ? try nextStored() : try nextDeflated()
                } catch {
                    failure = error
                    throw error
                }
            }

            private func nextStored() throws(AppleHealthImportError) -> [UInt8]? {
                guard remainingInput > 0 else {
                    try finish()
                    return nil
                }
                let bytes = try file.read(at: nextInput, count: Int(min(UInt64(chunkSize), remainingInput)))
                nextInput += UInt64(bytes.count)
                remainingInput -= UInt64(bytes.count)
                try bytes.withUnsafeBufferPointer { (buffer) throws(AppleHealthImportError) in try account(buffer) }
                return bytes
            }

            private func nextDeflated() throws(AppleHealthImportError) -> [UInt8]? {
                while true {
                    if stream.pointee.avail_in == 0 && remainingInput > 0 {
                        let count = Int(min(UInt64(input.count), remainingInput))
                        try file.read(at: nextInput, into: UnsafeMutableBufferPointer(rebasing: input[0..<count]))
                        nextInput += UInt64(count)
                        remainingInput -= UInt64(count)
                        stream.pointee.next_in = input.baseAddress
                        stream.pointee.avail_in = UInt32(count)
                    }
                    stream.pointee.next_out = output.baseAddress
                    stream.pointee.avail_out = UInt32(output.count)
                    let status = inflate(stream, Z_NO_FLUSH)
                    let count = output.count - Int(stream.pointee.avail_out)
                    switch status {
                    case Z_OK, Z_STREAM_END:
                        break
                    case Z_BUF_ERROR where count == 0 && remainingInput == 0:
                        throw .damagedZip("the export's compressed data ends early")
                    case Z_BUF_ERROR:
                        break
                    default:
                        throw .damagedZip("the export's compressed data is corrupt")
                    }
                    if count > 0 {
                        try account(UnsafeBufferPointer(rebasing: output[0..<count]))
                        if status == Z_STREAM_END { try finish() }
                        return Array(UnsafeBufferPointer(rebasing: output[0..<count]))
                    }
                    if status == Z_STREAM_END {
                        try finish()
                        return nil
                    }
                }
            }

            /// Counts inflated bytes against the declared size and the limit: a lying header cannot make us inflate more.
            private func account(_ bytes: UnsafeBufferPointer<UInt8>) throws(AppleHealthImportError) {
                produced += UInt64(bytes.count)
                guard produced <= entry.uncompressedSize, produced <= limit else { throw .zipBomb }
                crc = crc32(crc, bytes.baseAddress, UInt32(bytes.count))
            }

            private func finish() throws(AppleHealthImportError) {
                finished = true
                guard produced == entry.uncompressedSize else { throw .damagedZip("the export is shorter than the archive declares") }
                guard UInt32(truncatingIfNeeded: crc) == entry.crc32 else { throw .damagedZip("the export fails its CRC-32 check") }
            }
        }
    }

    extension Collection<UInt8> where Index == Int {
        fileprivate func uint16(at offset: Int) -> UInt16 {
            UInt16(self[startIndex + offset]) | UInt16(self[startIndex + offset + 1]) << 8
        }

        fileprivate func uint32(at offset: Int) -> UInt32 {
            UInt32(uint16(at: offset)) | UInt32(uint16(at: offset + 2)) << 16
        }
    }
#endif
