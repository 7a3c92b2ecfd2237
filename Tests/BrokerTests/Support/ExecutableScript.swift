import Foundation

/// Shell scripts that tests run as programs (a mail program that works, hangs or fails).
///
/// A script must never be written through a descriptor of the test process. Tests run side by side in that
/// process and start children all the time (mail programs, servers, psql); a child forked while the script
/// is open for writing holds the descriptor until it execs, and exec of the script meanwhile fails with
/// ETXTBSY, "Text file busy" (a run of the suite failed so). A child shell writes it instead: only that
/// shell ever holds it open for writing, and it has exited before the script is run.
enum ExecutableScript {
    /// Writes `text` to `url` (replacing it, by rename, so a program being run keeps its old text) and makes it executable.
    static func write(_ text: String, to url: URL) async throws {
        let run = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", #"printf '%s' "$2" > "$1.new" && chmod 755 "$1.new" && mv "$1.new" "$1""#, "sh", url.path, text],
            timeout: .seconds(30))
        guard run.status == 0 else { throw TestSetupError("writing the script \(url.path) failed: \(run.output)") }
    }
}
