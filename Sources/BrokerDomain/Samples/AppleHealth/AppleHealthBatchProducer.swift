import Foundation

/// The parsing side of an import's pipeline: reads export.xml chunk by chunk and hands back what the parser made
/// of it in batches, so that the next batch is parsed while the import stores the previous one.
///
/// It owns the reader (an open file) and the parser, and is used by one task at a time: the import awaits each
/// batch before it asks for the next (`AppleHealthImport` starts `next` in an `async let` and awaits it before
/// the next one starts), and reads `parser` only after the last batch was awaited. That hand-off is what makes
/// the unchecked `Sendable` sound.
final class AppleHealthBatchProducer: @unchecked Sendable {
    /// What a batch holds and how far the file had been read when it was cut.
    struct Batch: Sendable {
        var samples: [Sample] = []
        /// Records of cumulative types, for `AppleHealthSourceOverlapStore.stage`.
        var sourced: [AppleHealthSourcedRecord] = []
        var bytesRead: Int64 = 0
        var recordsSeen = 0
    }

    let reader: AppleHealthExportReader
    /// The parser's counts (skipped, invalid, time zone, sources) are final once `next` returned nil.
    private(set) var parser: AppleHealthParser
    private var finished = false
    /// A batch is cut when it holds this many samples, or this many sourced records, or when this many bytes
    /// of the upload were read for it (so that progress moves through a file of records Data4Help skips).
    let samplesPerBatch: Int
    let sourcedPerBatch: Int
    let bytesPerBatch: UInt64

    init(reader: AppleHealthExportReader, parser: AppleHealthParser, samplesPerBatch: Int, sourcedPerBatch: Int, bytesPerBatch: UInt64) {
        self.reader = reader
        self.parser = parser
        self.samplesPerBatch = samplesPerBatch
        self.sourcedPerBatch = sourcedPerBatch
        self.bytesPerBatch = bytesPerBatch
    }

    /// The next batch, nil after the last one. The last batch is returned only once the parser has seen the
    /// end of the file (`finish()`): a truncated or foreign file throws instead. Throws `CancellationError`
    /// between chunks when the task is cancelled.
    func next() throws -> Batch? {
        guard !finished else { return nil }
        var batch = Batch()
        batch.samples.reserveCapacity(min(samplesPerBatch, 1 << 16))  // a test asks for one batch of the whole file
        let start = reader.bytesRead
        while true {
            try Task.checkCancellation()
            guard let chunk = try reader.next() else {
                try parser.finish()
                finished = true
                break
            }
            batch.samples += try parser.feed(chunk)
            batch.sourced += parser.takeSourcedRecords()
            if batch.samples.count >= samplesPerBatch || batch.sourced.count >= sourcedPerBatch
                || reader.bytesRead - start >= bytesPerBatch
            {
                break
            }
        }
        batch.bytesRead = Int64(reader.bytesRead)
        batch.recordsSeen = parser.recordsSeen
        return batch
    }
}
