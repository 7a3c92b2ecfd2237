import ArgumentParser
import AutomatedSOS
import Foundation

/// `d4h sos`: replays a recorded trace through AutomatedSOS, as the device would see it.
struct SOS: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sos",
        abstract: "Replay a trace (CSV type,value,at) through AutomatedSOS; print one JSON line per alert and per responder action.",
        discussion: """
            Nobody answers a replay, so each alert is prompted and its countdown runs out; the call is then placed \
            (unless --prompt-only). Without --dial-command a call is only reported (`dialed`), never placed.
            """)

    @Option(help: "The trace: CSV with the header type,value,at, in delivery order; - for standard input.")
    var trace: String
    @Option(help: "The person's age in years (heart-rate bounds depend on it).")
    var age: Int
    @Option(help: "Replay in real time divided by this (60: one minute of trace per second). Default: at once.")
    var speed: Double?
    @Option(help: "Seconds the person has to answer a prompt.")
    var countdown: Double = 30
    @Flag(help: "Prompt only: when the countdown runs out, do not call.")
    var promptOnly = false
    @Option(help: "A policy as JSON (SOSPolicy); default: the built-in policy.")
    var policy: String?
    @Option(help: "Run this shell command instead of a call, with the rule, type, value and time as arguments; its output goes to standard error.")
    var dialCommand: String?

    func validate() throws {
        guard (0...130).contains(age) else { throw ValidationError("--age must be between 0 and 130") }
        if let speed, !(speed > 0) { throw ValidationError("--speed must be positive") }
        guard countdown >= 0 else { throw ValidationError("--countdown must not be negative") }
    }

    func run() async throws {
        let data: Data
        if trace == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: trace) else { fail("cannot read \(trace)") }
            data = contents
        }
        let samples: [SOSSample]
        do {
            samples = try SOSTrace.parse(String(decoding: data, as: UTF8.self))
        } catch let error as SOSTrace.ParseError {
            fail("\(trace): \(error)")
        }
        var chosenPolicy = SOSPolicy.default
        if let policy {
            guard let contents = FileManager.default.contents(atPath: policy) else { fail("cannot read \(policy)") }
            chosenPolicy = try JSONDecoder().decode(SOSPolicy.self, from: contents)
        }
        let replay = SOSReplay(
            policy: chosenPolicy, age: age,
            responder: SOSResponderConfiguration(countdown: countdown, callOnSilence: !promptOnly), speed: speed)
        let dialer: any SOSDialer = dialCommand.map(CommandDialer.init(command:)) ?? ReportOnlyDialer()
        await replay.run(samples, dialer: dialer) { event in
            // Unbuffered, one line at a time, so `--speed` output can be watched or piped live.
            FileHandle.standardOutput.write(Data((event.jsonLine() + "\n").utf8))
        }
    }
}

/// Places no call: the `dialed` line is the report.
struct ReportOnlyDialer: SOSDialer {
    func dial(for alert: SOSAlert) async throws {}
}

/// Runs `/bin/sh -c "<command> \"$@\""` with the alert's rule, type, value and time as arguments.
struct CommandDialer: SOSDialer {
    struct Failed: Error, CustomStringConvertible {
        var status: Int32
        var description: String { "the dial command exited with status \(status)" }
    }

    var command: String

    func dial(for alert: SOSAlert) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command + " \"$@\"", "d4h-sos", alert.rule, alert.type.rawValue, String(alert.value), SOSTrace.format(alert.at)]
        // Standard output carries only the JSON lines.
        process.standardOutput = FileHandle.standardError
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        guard status == 0 else { throw Failed(status: status) }
    }
}
