import AutomatedSOS
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Samples waiting to be uploaded, on disk so that killing the app never loses one.
///
/// Three files in `directory`: `samples.jsonl`, append-only, one sample per line, flushed to the disk
/// (`fsync`) before `append` returns; `acknowledged`, the number of lines the server has confirmed,
/// replaced atomically; and `rejected.jsonl`, append-only and fsync'd like the log, the samples the server
/// refused with their messages (the quarantine). A crash between the upload and the marker re-sends a
/// batch, which is safe because the server stores a `(type, at)` only once. A torn last line (a crash
/// mid-append) is dropped on open, in either log.
///
/// A sample leaves the pending part only through `acknowledge`, and the uploader acknowledges a batch only
/// once each of its samples is stored by the server or already written (and fsync'd) to the quarantine;
/// so at every instant a sample the server has not stored is pending, quarantined, or both (after a crash
/// in between; `isRejected` lets the uploader skip it then), never neither, until `discardRejected`.
/// `requeueRejected` keeps the same rule in the other direction: pending first, then out of the quarantine.
/// Not thread-safe on its own: `MonitoredUploader` (an actor) owns it.
public final class SampleOutbox {
    public let directory: URL
    private let logURL: URL
    private let markerURL: URL
    private let rejectedURL: URL
    private let handle: FileHandle
    /// Open once the quarantine file exists (it is created by the first `quarantine`).
    private var rejectedHandle: FileHandle?
    /// Every line of the log (the pending part is `lines[acknowledged...]`).
    private var lines: [SOSSample]
    public private(set) var acknowledged: Int
    /// The quarantine, oldest first, as on disk.
    public private(set) var rejected: [RejectedSample]
    private var rejectedKeys: Set<SampleKey>

    /// One line of the log; seconds since 1970 as a JSON number keep `at` exact.
    private struct Line: Codable {
        var type: String
        var value: Double
        var at: Double
    }

    /// One line of the quarantine: the sample as in the log, plus why and when it was set aside.
    private struct RejectedLine: Codable {
        var type: String
        var value: Double
        var at: Double
        var messages: [String]
        var rejectedAt: Double
    }

    /// A sample's identity in the quarantine: its type, value and time to the microsecond (a `Date` read back
    /// from seconds since 1970 can differ from the original in the last bit).
    private struct SampleKey: Hashable {
        var type: SOSSampleType
        var value: Double
        var microseconds: Int64

        init(_ sample: SOSSample) {
            type = sample.type
            value = sample.value
            microseconds = Int64((sample.at.timeIntervalSince1970 * 1_000_000).rounded())
        }
    }

    public init(directory: URL) throws {
        self.directory = directory
        logURL = directory.appendingPathComponent("samples.jsonl")
        markerURL = directory.appendingPathComponent("acknowledged")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: logURL.path) {
            FileManager.default.createFile(atPath: logURL.path, contents: nil)
        }
        let (data, raws) = try Self.completeLines(of: logURL)
        let decoder = JSONDecoder()
        var lines: [SOSSample] = []
        for raw in raws {
            let line = try decoder.decode(Line.self, from: Data(raw))
            guard let type = SOSSampleType(rawValue: line.type) else { continue }
            lines.append(SOSSample(type: type, value: line.value, at: Date(timeIntervalSince1970: line.at)))
        }
        self.lines = lines
        let marker = (try? String(contentsOf: markerURL, encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        acknowledged = min(marker ?? 0, lines.count)
        handle = try FileHandle(forUpdating: logURL)
        try handle.truncate(atOffset: UInt64(data.count))
        try handle.seekToEnd()

        rejectedURL = directory.appendingPathComponent("rejected.jsonl")
        var rejected: [RejectedSample] = []
        if FileManager.default.fileExists(atPath: rejectedURL.path) {
            let (data, raws) = try Self.completeLines(of: rejectedURL)
            for raw in raws {
                let line = try decoder.decode(RejectedLine.self, from: Data(raw))
                guard let type = SOSSampleType(rawValue: line.type) else { continue }
                rejected.append(
                    RejectedSample(
                        sample: SOSSample(type: type, value: line.value, at: Date(timeIntervalSince1970: line.at)),
                        messages: line.messages, rejectedAt: Date(timeIntervalSince1970: line.rejectedAt)))
            }
            let rejectedHandle = try FileHandle(forUpdating: rejectedURL)
            try rejectedHandle.truncate(atOffset: UInt64(data.count))
            try rejectedHandle.seekToEnd()
            self.rejectedHandle = rejectedHandle
        }
        self.rejected = rejected
        rejectedKeys = Set(rejected.map { SampleKey($0.sample) })
    }

    /// A file's whole lines: a crash mid-append leaves a line without its newline, which is left out (the
    /// caller truncates the file to `data`, so the next append starts clean).
    private static func completeLines(of url: URL) throws -> (data: Data, lines: [Data.SubSequence]) {
        var data = try Data(contentsOf: url)
        if let lastNewline = data.lastIndex(of: UInt8(ascii: "\n")) {
            if lastNewline != data.index(before: data.endIndex) { data = data[...lastNewline] }
        } else {
            data = Data()
        }
        return (data, data.split(separator: UInt8(ascii: "\n")))
    }

    deinit {
        try? handle.close()
        try? rejectedHandle?.close()
    }

    /// Samples not yet confirmed by the server, oldest first.
    public var pending: ArraySlice<SOSSample> { lines[acknowledged...] }

    /// Appends samples and returns once they are on the disk.
    public func append(_ samples: some Sequence<SOSSample>) throws {
        let encoder = JSONEncoder()
        var data = Data()
        var added: [SOSSample] = []
        for sample in samples {
            data.append(try encoder.encode(Line(type: sample.type.rawValue, value: sample.value, at: sample.at.timeIntervalSince1970)))
            data.append(UInt8(ascii: "\n"))
            added.append(sample)
        }
        guard !added.isEmpty else { return }
        try handle.write(contentsOf: data)
        try handle.synchronize()
        lines.append(contentsOf: added)
    }

    /// Records that every sample before position `end` of the log reached the server. Positions, not
    /// counts, so two overlapping uploads of the same batch can never acknowledge a sample neither sent.
    /// When nothing is left pending, the log is emptied so it does not grow for ever.
    public func acknowledge(through end: Int) throws {
        let newValue = max(acknowledged, min(end, lines.count))
        guard newValue != acknowledged else { return }
        if newValue == lines.count {
            // Marker first: a crash between the two steps leaves a full log with marker 0, which only
            // re-sends duplicates; the other order could leave a marker that covers future samples.
            try writeMarker(0)
            try handle.truncate(atOffset: 0)
            try handle.synchronize()
            lines.removeAll(keepingCapacity: true)
            acknowledged = 0
        } else {
            try writeMarker(newValue)
            acknowledged = newValue
        }
    }

    /// Whether this sample is in the quarantine. A sample can be both pending and quarantined when the
    /// process stopped after quarantining it but before its batch was acknowledged; it is not to be sent.
    public func isRejected(_ sample: SOSSample) -> Bool { rejectedKeys.contains(SampleKey(sample)) }

    /// Appends samples to the quarantine (`rejected.jsonl`) and returns once they are on the disk; samples
    /// already there are skipped, so quarantining again after a crash adds nothing. Returns how many were
    /// added. This does not touch the pending log: the caller acknowledges the batch once the rest of it is
    /// stored, and only this order (quarantine fsync'd first, acknowledgement after) keeps every sample on
    /// the disk somewhere.
    @discardableResult
    public func quarantine(_ samples: [RejectedSample]) throws -> Int {
        let encoder = JSONEncoder()
        var data = Data()
        var added: [RejectedSample] = []
        var keys = rejectedKeys
        for entry in samples where keys.insert(SampleKey(entry.sample)).inserted {
            let sample = entry.sample
            data.append(
                try encoder.encode(
                    RejectedLine(
                        type: sample.type.rawValue, value: sample.value, at: sample.at.timeIntervalSince1970,
                        messages: entry.messages, rejectedAt: entry.rejectedAt.timeIntervalSince1970)))
            data.append(UInt8(ascii: "\n"))
            added.append(entry)
        }
        guard !added.isEmpty else { return 0 }
        let file = try openRejected()
        try file.write(contentsOf: data)
        try file.synchronize()
        rejected.append(contentsOf: added)
        rejectedKeys = keys
        return added.count
    }

    /// Puts every quarantined sample back in the pending log, so that the next upload sends it again: for
    /// refusals that can go away (a time in the future before the device's clock was fixed, a type the
    /// server did not know yet). Returns how many samples left the quarantine (all of them).
    ///
    /// Crash safety, in the same order as a refusal but the other way round: the samples are appended to the
    /// log and fsync'd first, and only then is the quarantine emptied (fsync'd). A crash in between leaves a
    /// sample both pending and quarantined, the state a crash mid-refusal leaves too: the uploader skips it
    /// (`isRejected`) and it stays in the quarantine, so it is not lost. Calling this again then finishes the
    /// job without a second copy: a sample already pending is not appended again (it would only be sent
    /// twice, which the server, idempotent on `(type, at)`, would take as a duplicate, but there is no need),
    /// and one the uploader acknowledged in between (skipped as quarantined) is appended again. Either way it
    /// ends up pending once and not quarantined.
    ///
    /// Not appending an already-pending sample relies on the uploader never acknowledging a batch holding a
    /// sample that is neither stored nor quarantined at that moment (see `MonitoredUploader`), which holds even
    /// if this runs while a batch holding it is in flight.
    @discardableResult
    public func requeueRejected() throws -> Int {
        guard !rejected.isEmpty else { return 0 }
        let count = rejected.count
        var pendingKeys = Set(pending.map(SampleKey.init))
        let missing = rejected.map(\.sample).filter { pendingKeys.insert(SampleKey($0)).inserted }
        try append(missing)
        // Crash here: each sample is pending and still quarantined (skipped by the uploader), never neither.
        try discardRejected()
        return count
    }

    /// Empties the quarantine, on the disk too (the app has shown the samples to the person, or given up on them).
    public func discardRejected() throws {
        guard let rejectedHandle else { return }
        try rejectedHandle.truncate(atOffset: 0)
        try rejectedHandle.synchronize()
        rejected.removeAll()
        rejectedKeys.removeAll()
    }

    /// The quarantine file, created on first use; the directory is fsync'd after creating it so that the new
    /// file's name is on the disk before any acknowledgement that relies on its contents.
    private func openRejected() throws -> FileHandle {
        if let rejectedHandle { return rejectedHandle }
        FileManager.default.createFile(atPath: rejectedURL.path, contents: nil)
        let file = try FileHandle(forUpdating: rejectedURL)
        try file.seekToEnd()
        try synchronizeDirectory()
        rejectedHandle = file
        return file
    }

    /// Flushes the directory itself to the disk, so that a file created or renamed in it keeps its name after
    /// a power loss (fsync of the file alone does not cover its directory entry).
    private func synchronizeDirectory() throws {
        let descriptor = open(directory.path, O_RDONLY)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    /// The absolute position of the first pending sample (for `acknowledge(through:)`).
    public var firstPendingPosition: Int { acknowledged }

    private func writeMarker(_ value: Int) throws {
        let temporary = directory.appendingPathComponent("acknowledged.tmp")
        FileManager.default.createFile(atPath: temporary.path, contents: Data("\(value)\n".utf8))
        let file = try FileHandle(forWritingTo: temporary)
        try file.synchronize()
        try file.close()
        guard rename(temporary.path, markerURL.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
        // The rename is durable only once the directory is. Without this, a power loss after `acknowledge`
        // emptied the log (fsync'd) could bring back the old, larger marker, which would then count samples
        // appended later as acknowledged.
        try synchronizeDirectory()
    }
}
