import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One run of the mail program, on the calling thread, which it blocks: the message on its standard input,
/// the exit awaited until a deadline, and past it the program and everything it started stopped (`SIGTERM`
/// to its process group, `SIGKILL` after a grace period) and reaped.
///
/// Spawned directly rather than through Foundation's `Process`, for what `Process` does not offer: a
/// process group of its own (a shell script's `sleep` would outlive a `SIGTERM` to the shell alone), stdin
/// writes that give up at the deadline and never raise `SIGPIPE`, and a reaping this code owns.
enum MailProgramRun {
    enum Outcome: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)
        /// Not finished by the deadline; stopped and reaped.
        case timedOut
        /// `posix_spawn` failed with this `errno` (ENOENT: no such program; EACCES: not executable).
        case couldNotStart(Int32)
        /// Someone else reaped it (`waitpid` said ECHILD): how it ended is unknown.
        case lost
    }

    /// How long a program has between `SIGTERM` and `SIGKILL` to finish what it does.
    static let grace: Duration = .seconds(2)

    /// Runs `executable` with `arguments`, `input` on its standard input, until `deadline`. The pid is
    /// handed to `started` as soon as it is known (tests check that nothing is left behind).
    static func run(
        _ executable: String, _ arguments: [String], input: [UInt8], deadline: ContinuousClock.Instant,
        started: (pid_t) -> Void = { _ in }
    ) -> Outcome {
        // A socket rather than a pipe for standard input: writes to it can give up at a deadline
        // (SO_SNDTIMEO) and can refuse to raise SIGPIPE when the program has exited unread.
        var ends: [Int32] = [-1, -1]
        #if os(Linux)
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
            let type = SOCK_STREAM
        #endif
        guard socketpair(AF_UNIX, type, 0, &ends) == 0 else { return .couldNotStart(errno) }
        let (ours, theirs) = (ends[0], ends[1])
        #if !os(Linux)
            // Without SOCK_CLOEXEC the two ends are marked now; a spawn elsewhere in between could inherit them.
            _ = fcntl(ours, F_SETFD, FD_CLOEXEC)
            _ = fcntl(theirs, F_SETFD, FD_CLOEXEC)
            var one: Int32 = 1
            _ = setsockopt(ours, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif

        var pid: pid_t = 0
        let spawned = spawn(executable, arguments, standardInput: theirs, pid: &pid)
        close(theirs)
        guard spawned == 0 else {
            close(ours)
            return .couldNotStart(spawned)
        }
        started(pid)
        let wroteAll = write(input, to: ours, until: deadline)
        // The end of standard input: `sendmail -t -i` sends when it reads it.
        close(ours)
        if wroteAll, let status = waitForExit(pid, until: deadline) { return status }
        return stop(pid)
    }

    /// `posix_spawn` into a new process group, with default signal handling (the server ignores SIGPIPE, and
    /// an ignored signal would stay ignored in the program). Returns 0 or the `errno`.
    private static func spawn(_ executable: String, _ arguments: [String], standardInput: Int32, pid: inout pid_t) -> Int32 {
        #if os(Linux)
            var actions = posix_spawn_file_actions_t()
            var attributes = posix_spawnattr_t()
        #else
            var actions: posix_spawn_file_actions_t? = nil
            var attributes: posix_spawnattr_t? = nil
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, standardInput, STDIN_FILENO)
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        return posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
    }

    /// Writes `input`, giving up at `deadline`; false when it gave up. A program that exits without reading
    /// all of it ends the writing too (its exit status then says what happened).
    private static func write(_ input: [UInt8], to socket: Int32, until deadline: ContinuousClock.Instant) -> Bool {
        var offset = 0
        while offset < input.count {
            let left = deadline - .now
            guard left > .zero else { return false }
            var limit = timeval(tv_sec: Int(left.components.seconds), tv_usec: .init(max(1, left.components.attoseconds / 1_000_000_000_000)))
            _ = setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            #if os(Linux)
                let flags = Int32(MSG_NOSIGNAL)
            #else
                let flags: Int32 = 0
            #endif
            let sent = input.withUnsafeBytes { send(socket, $0.baseAddress! + offset, $0.count - offset, flags) }
            if sent >= 0 {
                offset += sent
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                continue  // SO_SNDTIMEO passed: the deadline check above decides
            } else {
                return true  // EPIPE, ECONNRESET: the program stopped reading; its exit tells why
            }
        }
        return true
    }

    /// The program's end, reaped, or nil if it has not ended by `deadline`.
    private static func waitForExit(_ pid: pid_t, until deadline: ContinuousClock.Instant) -> Outcome? {
        var pause: Duration = .milliseconds(1)
        while true {
            if let outcome = reap(pid) { return outcome }
            guard ContinuousClock.now < deadline else { return nil }
            // Polling on this thread, which only this program holds: a few checks a second once it runs long.
            Thread.sleep(forTimeInterval: Double(min(pause, deadline - .now).components.attoseconds) / 1e18)
            pause = min(pause * 2, .milliseconds(50))
        }
    }

    /// `SIGTERM` to the program's group, `SIGKILL` after the grace period, and the program reaped.
    private static func stop(_ pid: pid_t) -> Outcome {
        kill(-pid, SIGTERM)
        let end = ContinuousClock.now + grace
        var reaped = false
        while ContinuousClock.now < end {
            if reap(pid) != nil {
                reaped = true
                break
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        // Also after the program itself ended: what it started may still run. (Its pid, and so the group's id,
        // could only have been reused after a wrap-around of pids within the grace period.)
        kill(-pid, SIGKILL)
        if !reaped {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        }
        return .timedOut
    }

    /// The outcome if the program has ended (it is then reaped), nil while it runs.
    private static func reap(_ pid: pid_t) -> Outcome? {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == 0 { return nil }
        if result == -1 { return errno == EINTR ? nil : .lost }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import (they are macros).
        return status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
    }
}
