import ArgumentParser
import AutomatedSOS
import BrokerDomain
import BrokerServer
import CommandLineSupport
import Foundation

/// `d4h sos`: replays a recorded trace through AutomatedSOS, as the device would see it.
struct SOS: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sos",
        abstract: "Replay a trace (CSV type,value,at) through AutomatedSOS; print one JSON line per alert and per responder action.",
        discussion: """
            The trace is read line by line as it arrives, so a live feed works (tail -f trace.csv | d4h sos --trace - …) \
            and a trace of any length replays in constant memory. A bad line stops the replay there, after everything \
            before it, with the line named on standard error and a non-zero exit status. \
            Nobody answers a replay, so each alert is prompted and its countdown runs out; the call is then placed \
            (unless --prompt-only). Without --dial-command a call is only reported (`dialed`), never placed. \
            The trace and policy formats: docs/automated-sos.md.
            """)

    @Option(help: "The trace: CSV with the header type,value,at, in delivery order; - for standard input.")
    var trace: String
    // The numbers are read as text (`.unconditional`: even one that starts with '-') and checked in
    // `validate()`, so `--age -3` is reported as an invalid age rather than as a missing value.
    @Option(parsing: .unconditional, help: ArgumentHelp("The person's age in years, 0 to 130 (heart-rate bounds depend on it).", valueName: "years"))
    var age: String
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Replay in real time divided by this (60: one minute of trace per second). Default: at once.", valueName: "factor"))
    var speed: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds the person has to answer a prompt.", valueName: "seconds"))
    var countdown: String = "30"
    @Flag(help: "Prompt only: when the countdown runs out, do not call.")
    var promptOnly = false
    @Option(help: "A policy as JSON (docs/automated-sos.md, docs/examples/sos-policy.json); default: the built-in policy.")
    var policy: String?
    @Option(help: "Run this shell command instead of a call, with the rule, type, value and time as arguments; its output goes to standard error.")
    var dialCommand: String?

    /// The checked values; `validate()` has made sure they parse.
    var years: Int { Self.years(age)! }
    var speedFactor: Double? { speed.flatMap(Self.positive) }
    var countdownSeconds: Double { Self.nonNegative(countdown)! }

    static func years(_ text: String) -> Int? { Int(text).flatMap { (0...130).contains($0) ? $0 : nil } }
    static func positive(_ text: String) -> Double? { Double(text).flatMap { $0.isFinite && $0 > 0 ? $0 : nil } }
    static func nonNegative(_ text: String) -> Double? { Double(text).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } }

    func validate() throws {
        func invalid(_ value: String, _ option: String, _ rule: String) -> ValidationError {
            ValidationError("The value '\(value)' is invalid for '\(option)': \(rule).")
        }
        guard Self.years(age) != nil else { throw invalid(age, "--age <years>", "expected a whole number of years from 0 to 130") }
        if let speed, Self.positive(speed) == nil { throw invalid(speed, "--speed <factor>", "expected a number above 0") }
        guard Self.nonNegative(countdown) != nil else { throw invalid(countdown, "--countdown <seconds>", "expected a number of seconds, 0 or more") }
    }

    func run() async throws {
        var chosenPolicy = SOSPolicy.default
        if let policy {
            do { chosenPolicy = try SOSPolicy.load(contentsOf: URL(fileURLWithPath: policy)) } catch { fail("policy \(error)") }
        }
        let handle: FileHandle
        let source: String
        if trace == "-" {
            handle = FileHandle.standardInput
            source = "standard input"
        } else {
            guard let file = FileHandle(forReadingAtPath: trace) else { fail("cannot read \(trace)") }
            handle = file
            source = trace
        }
        let replay = SOSReplay(
            policy: chosenPolicy, age: years,
            responder: SOSResponderConfiguration(countdown: countdownSeconds, callOnSilence: !promptOnly), speed: speedFactor)
        let dialer: any SOSDialer = dialCommand.map(CommandDialer.init(command:)) ?? ReportOnlyDialer()
        do {
            // Each line is parsed, monitored and its events printed before the next is read.
            try await replay.run(streaming: SOSTraceEntries(handle: handle), dialer: dialer) { event in
                // Unbuffered, one line at a time, so the output can be watched or piped live.
                FileHandle.standardOutput.write(Data((event.jsonLine() + "\n").utf8))
            }
        } catch {
            // `trace.csv: line 12: not a number: sixty`; every line before it has been replayed.
            fail("\(source): \(error)")
        }
    }
}
