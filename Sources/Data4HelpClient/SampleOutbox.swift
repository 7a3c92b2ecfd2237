import AutomatedSOS
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Samples waiting to be uploaded, on disk so that killing the app never loses one.
///
/// Two files in `directory`: `samples.jsonl`, append-only, one sample per line, flushed to the disk
/// (`fsync`) before `append` returns; and `acknowledged`, the number of lines the server has confirmed,
/// replaced atomically. A crash between the upload and the marker re-sends a batch, which is safe because
/// the server stores a `(type, at)` only once. A torn last line (a crash mid-append) is dropped on open.
/// Not thread-safe on its own: `MonitoredUploader` (an actor) owns it.
public final class SampleOutbox {
    public let directory: URL
    private let logURL: URL
    private let markerURL: URL
    private let handle: FileHandle
    /// Every line of the log (the pending part is `lines[acknowledged...]`).
    private var lines: [SOSSample]
    public private(set) var acknowledged: Int

    /// One line of the log; seconds since 1970 as a JSON number keep `at` exact.
    private struct Line: Codable {
        var type: String
        var value: Double
        var at: Double
    }

    public init(directory: URL) throws {
        self.directory = directory
        logURL = directory.appendingPathComponent("samples.jsonl")
        markerURL = directory.appendingPathComponent("acknowledged")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: logURL.path) {
            FileManager.default.createFile(atPath: logURL.path, contents: nil)
        }
        var data = try Data(contentsOf: logURL)
        // A crash mid-append leaves a line without its newline: drop it, so the next append starts clean.
        if let lastNewline = data.lastIndex(of: UInt8(ascii: "\n")) {
            if lastNewline != data.index(before: data.endIndex) { data = data[...lastNewline] }
        } else {
            data = Data()
        }
        let decoder = JSONDecoder()
        var lines: [SOSSample] = []
        for raw in data.split(separator: UInt8(ascii: "\n")) {
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
    }

    deinit { try? handle.close() }

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

    /// The absolute position of the first pending sample (for `acknowledge(through:)`).
    public var firstPendingPosition: Int { acknowledged }

    private func writeMarker(_ value: Int) throws {
        let temporary = directory.appendingPathComponent("acknowledged.tmp")
        FileManager.default.createFile(atPath: temporary.path, contents: Data("\(value)\n".utf8))
        let file = try FileHandle(forWritingTo: temporary)
        try file.synchronize()
        try file.close()
        guard rename(temporary.path, markerURL.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }
}
