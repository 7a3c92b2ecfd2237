#if canImport(CZlib)
    import Foundation

    /// Reads an uploaded Apple Health export on disk, export.xml itself or the iPhone's export.zip, as chunks of export.xml
    /// to feed an `AppleHealthParser`. Owns an open file: use it from one task at a time.
    package final class AppleHealthExportReader {
        /// How the upload is packaged.
        package enum Format: Sendable {
            case xml, zip
        }

        package let format: Format
        private let file: AppleHealthUploadFile?
        private let entry: AppleHealthArchive.EntryReader?
        /// The archive, for a zip: its workout routes are read after export.xml.
        package let archive: AppleHealthArchive?
        private let chunkSize: Int
        private var position: UInt64 = 0

        /// The size of the upload on disk (of the archive, for a zip).
        package let size: UInt64

        /// Opens `url` as `format`, or, when nil, as a ZIP archive if it starts like one and as XML otherwise. A file
        /// sent as XML that is a ZIP archive is read as one (people pick the wrong kind); one sent as ZIP must be one.
        package init(
            contentsOf url: URL, format: Format? = nil, chunkSize: Int = 64 * 1024,
            maximumUncompressedSize: UInt64 = AppleHealthArchive.defaultMaximumUncompressedSize
        ) throws(AppleHealthImportError) {
            self.chunkSize = max(chunkSize, 1024)
            let file = try AppleHealthUploadFile(url.path)
            size = file.size
            guard file.size > 0 else { throw .empty }
            let sniffed: Format = AppleHealthArchive.isZip(try file.read(at: 0, count: Int(min(file.size, 4)))) ? .zip : .xml
            let resolved = format == .zip ? .zip : sniffed
            self.format = resolved
            switch resolved {
            case .xml:
                self.file = file
                entry = nil
                archive = nil
            case .zip:
                file.closeFile()
                self.file = nil
                let archive = try AppleHealthArchive(contentsOf: url, maximumUncompressedSize: maximumUncompressedSize)
                self.archive = archive
                entry = try archive.openExportXML(chunkSize: chunkSize)
            }
        }

        /// Bytes of the upload read so far (of the archive, for a zip): what progress is told in.
        package var bytesRead: UInt64 {
            if let entry { return min(entry.fileOffset, size) }
            return position
        }

        /// The next chunk of export.xml, or nil at its end.
        package func next() throws(AppleHealthImportError) -> [UInt8]? {
            if let entry { return try entry.next() }
            guard let file else { return nil }
            var bytes = [UInt8](repeating: 0, count: chunkSize)
            let count = try bytes.withUnsafeMutableBufferPointer { (buffer) throws(AppleHealthImportError) in
                try file.readSome(at: position, into: buffer)
            }
            guard count > 0 else { return nil }
            position += UInt64(count)
            bytes.removeLast(chunkSize - count)
            return bytes
        }
    }
#endif
