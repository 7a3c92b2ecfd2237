import Foundation
import Synchronization
import Testing

/// `d4h sos` run as a person would run it: a long trace in constant memory, a live feed, a bad line, invalid
/// options, a malformed policy. No assertion depends on timing: waits have generous limits that only turn a
/// hang into a failure.
@Suite("d4h sos")
struct SOSCommandTests {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Peak resident set size in KiB, when measured.
        var peakKiB: Int?
    }

    /// Runs d4h with `arguments`, standard output and error to files (a pipe nobody reads could fill and stall
    /// the child), standard input from `input` (else empty). With `measureMemory`, under GNU time for the
    /// exact peak (`ru_maxrss`), or, without it, by polling the child's VmHWM.
    static func d4h(
        _ arguments: [String], input: URL? = nil, measureMemory: Bool = false, timeout: Duration = .seconds(900)
    ) async throws -> Run {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("stdout")
        let err = directory.appendingPathComponent("stderr")
        let timeOutput = directory.appendingPathComponent("time")
        for file in [out, err] { FileManager.default.createFile(atPath: file.path, contents: nil) }
        let process = Process()
        let gnuTime = measureMemory && FileManager.default.isExecutableFile(atPath: "/usr/bin/time")
        if gnuTime {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
            process.arguments = ["-f", "%M", "-o", timeOutput.path, try D4HCommand.executable.path] + arguments
        } else {
            process.executableURL = try D4HCommand.executable
            process.arguments = arguments
        }
        let stdout = try FileHandle(forWritingTo: out)
        let stderr = try FileHandle(forWritingTo: err)
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = try input.map { try FileHandle(forReadingFrom: $0) } ?? FileHandle(forReadingAtPath: "/dev/null")
        try process.run()
        var polledPeak = 0
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                process.terminate()
                throw TestSetupError("d4h \(arguments.joined(separator: " ")) did not finish within \(timeout)")
            }
            if measureMemory, !gnuTime { polledPeak = max(polledPeak, vmHWM(of: process.processIdentifier) ?? 0) }
            try await Task.sleep(for: .milliseconds(20))
        }
        try stdout.close()
        try stderr.close()
        var peak: Int? = measureMemory ? polledPeak : nil
        if gnuTime {
            // The last line: GNU time puts "Command exited with non-zero status" before it when there is one.
            let text = try String(contentsOf: timeOutput, encoding: .utf8)
            peak = text.split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        }
        return Run(
            status: process.terminationStatus, stdout: try String(contentsOf: out, encoding: .utf8),
            stderr: try String(contentsOf: err, encoding: .utf8), peakKiB: peak)
    }

    /// The high-water mark of a process's resident memory, KiB.
    static func vmHWM(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-sos-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func write(_ text: String, named name: String, in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    static func alerts(in stdout: String) -> [String] {
        stdout.split(separator: "\n").filter { $0.contains(#""event":"alert""#) }.map(String.init)
    }

    // MARK: a long trace

    /// 2,000,000 lines (about 76 MB): heart rate every second for 23 days, a collapse every 10,000 lines.
    /// The whole-file reader this replaced peaked at about 4 bytes of memory per byte of trace. (It was 5
    /// million lines, 117 s of every CI run on a debug build; 2 million still hold more text than the bound.)
    @Test("2 million lines replay in constant memory", .timeLimit(.minutes(30)))
    func aLongTraceInConstantMemory() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let trace = directory.appendingPathComponent("long.csv")
        let lines = 2_000_000
        let expectedAlerts = try Self.writeLongTrace(to: trace, lines: lines)
        let size = try FileManager.default.attributesOfItem(atPath: trace.path)[.size] as? Int ?? 0

        let run = try await Self.d4h(["sos", "--trace", trace.path, "--age", "45", "--prompt-only"], measureMemory: true)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Self.alerts(in: run.stdout).count == expectedAlerts)
        let peak = try #require(run.peakKiB)
        print("d4h sos: \(lines) lines (\(size / 1_048_576) MiB) replayed with a peak RSS of \(peak / 1024) MiB")
        // Below the trace's size, so a whole-file read (at least the 76 MB of text) cannot pass.
        #expect(peak < 64 * 1024, "peak RSS \(peak) KiB")
    }

    /// Writes the trace; returns how many alerts it should raise.
    static func writeLongTrace(to url: URL, lines: Int) throws -> Int {
        FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        // Times are built from bytes: formatting millions of dates with Foundation would dominate the test.
        let twoDigits: [[UInt8]] = (0..<100).map { Array(String(format: "%02d", $0).utf8) }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 20)
        buffer.append(contentsOf: Array("type,value,at\n".utf8))
        let normal = Array("heart_rate,65,2026-".utf8)
        let low = Array("heart_rate,30,2026-".utf8)
        // 2026-01-01 onwards; months of 2026 in days.
        let monthDays = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        var alerts = 0
        for i in 0..<lines {
            // Two consecutive readings of 30 every 10,000 lines, 10,000 s apart: past the 15-minute cooldown.
            let collapse = i % 10_000 >= 9_998
            if i % 10_000 == 9_999 { alerts += 1 }
            buffer.append(contentsOf: collapse ? low : normal)
            var day = i / 86_400
            var month = 0
            while day >= monthDays[month] {
                day -= monthDays[month]
                month += 1
            }
            let second = i % 86_400
            buffer.append(contentsOf: twoDigits[month + 1])
            buffer.append(UInt8(ascii: "-"))
            buffer.append(contentsOf: twoDigits[day + 1])
            buffer.append(UInt8(ascii: "T"))
            buffer.append(contentsOf: twoDigits[second / 3600])
            buffer.append(UInt8(ascii: ":"))
            buffer.append(contentsOf: twoDigits[second / 60 % 60])
            buffer.append(UInt8(ascii: ":"))
            buffer.append(contentsOf: twoDigits[second % 60])
            buffer.append(contentsOf: [UInt8(ascii: "Z"), UInt8(ascii: "\n")])
            if buffer.count > 1 << 20 - 64 {
                handle.write(Data(buffer))
                buffer.removeAll(keepingCapacity: true)
            }
        }
        handle.write(Data(buffer))
        return alerts
    }

    // MARK: a live feed

    @Test("an alert is printed while standard input is still open")
    func aLiveFeedAlertsBeforeTheEnd() async throws {
        let process = Process()
        process.executableURL = try D4HCommand.executable
        process.arguments = ["sos", "--trace", "-", "--age", "45", "--prompt-only"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        let received = Mutex("")
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            received.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
        defer {
            output.fileHandleForReading.readabilityHandler = nil
            if process.isRunning { process.terminate() }
        }
        // One line at a time, as a sensor would deliver them.
        for line in [
            "type,value,at", "heart_rate,70,2026-11-21T12:00:00Z", "heart_rate,30,2026-11-21T12:01:00Z", "heart_rate,31,2026-11-21T12:02:00Z",
        ] {
            input.fileHandleForWriting.write(Data((line + "\n").utf8))
        }
        // Standard input is still open: the alert must come before its end. (The limit only turns a hang into a failure.)
        let deadline = ContinuousClock.now + .seconds(300)
        while !received.withLock({ $0.contains(#""event":"alert""#) }) {
            try #require(process.isRunning, "d4h exited before standard input was closed: \(received.withLock { $0 })")
            try #require(ContinuousClock.now < deadline, "no alert while standard input was open: \(received.withLock { $0 })")
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(process.isRunning)
        #expect(received.withLock { $0 }.contains(#""rule":"heart_rate_low""#))

        input.fileHandleForWriting.write(Data("heart_rate,70,2026-11-21T12:03:00Z\n".utf8))
        try input.fileHandleForWriting.close()
        let exitDeadline = ContinuousClock.now + .seconds(300)
        while process.isRunning {
            try #require(ContinuousClock.now < exitDeadline, "d4h did not exit after standard input was closed")
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(process.terminationStatus == 0)
    }

    // MARK: a bad line

    static let badTrace = """
        type,value,at
        heart_rate,30,2026-11-21T12:00:00Z
        heart_rate,30,2026-11-21T12:01:00Z
        # a comment counts as a line
        heart_rate,thirty,2026-11-21T12:02:00Z
        systolic_pressure,150,2026-11-21T12:03:00Z
        systolic_pressure,150,2026-11-21T12:04:00Z

        """

    @Test("a bad line stops the replay there: events before it on stdout, its number on stderr, non-zero exit")
    func aBadLineInAFile() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let trace = try Self.write(Self.badTrace, named: "bad.csv", in: directory)
        let run = try await Self.d4h(["sos", "--trace", trace.path, "--age", "45"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("\(trace.path): line 5: not a number: thirty"), "\(run.stderr)")
        let events = run.stdout.split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["event"] as? String ?? "?"
        }
        #expect(events == ["alert", "prompted", "countdown_ended", "dialed"])
        #expect(run.stdout.contains(#""rule":"heart_rate_low""#))
        #expect(!run.stdout.contains("hypertension"))
    }

    @Test("a bad line on standard input is named as such")
    func aBadLineOnStandardInput() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let trace = try Self.write(Self.badTrace, named: "bad.csv", in: directory)
        let run = try await Self.d4h(["sos", "--trace", "-", "--age", "45"], input: trace)
        #expect(run.status != 0)
        #expect(run.stderr.contains("standard input: line 5: not a number: thirty"), "\(run.stderr)")
        #expect(Self.alerts(in: run.stdout).count == 1)
    }

    // MARK: invalid options

    @Test(
        "an invalid number is named as invalid, with its option and value",
        arguments: [
            (["--age", "-3"], "--age", "-3"), (["--age=-3"], "--age", "-3"), (["--age", "abc"], "--age", "abc"),
            (["--age", "131"], "--age", "131"), (["--age", "45", "--speed", "0"], "--speed", "0"),
            (["--age", "45", "--speed", "-2"], "--speed", "-2"), (["--age", "45", "--countdown", "-1"], "--countdown", "-1"),
        ])
    func invalidOptions(_ options: [String], _ option: String, _ value: String) async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let trace = try Self.write("type,value,at\n", named: "empty.csv", in: directory)
        let run = try await Self.d4h(["sos", "--trace", trace.path] + options)
        #expect(run.status != 0)
        #expect(run.stderr.contains("The value '\(value)' is invalid for '\(option)"), "\(run.stderr)")
        #expect(!run.stderr.contains("Missing value"), "\(run.stderr)")
    }

    // MARK: a malformed policy

    @Test("a malformed policy is named by file, line and field")
    func aMalformedPolicy() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let trace = try Self.write("type,value,at\nheart_rate,30,2026-11-21T12:00:00Z\n", named: "t.csv", in: directory)
        let policy = try Self.write(
            """
            {
              "rules": [
                {"id": "low", "type": "heart_rate", "comparison": "below", "threshold": 40},
                {"id": "hot", "type": "body_temp", "comparison": "above", "threshold": 40}
              ]
            }
            """, named: "policy.json", in: directory)
        let run = try await Self.d4h(["sos", "--trace", trace.path, "--age", "45", "--policy", policy.path])
        #expect(run.status != 0)
        #expect(run.stderr.contains("\(policy.path):4: rules[1].type: unknown sample type \"body_temp\""), "\(run.stderr)")
        #expect(run.stdout.isEmpty)

        let syntax = try Self.write(
            "{\n  \"rules\": [\n    {\"id\": \"low\" \"type\": \"heart_rate\"}\n  ]\n}\n", named: "syntax.json", in: directory)
        let broken = try await Self.d4h(["sos", "--trace", trace.path, "--age", "45", "--policy", syntax.path])
        #expect(broken.status != 0)
        #expect(broken.stderr.contains("\(syntax.path):3: not valid JSON"), "\(broken.stderr)")
    }
}
