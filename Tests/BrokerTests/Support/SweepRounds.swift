/// Runs a sweep (`announceExpiries`, `announceLapses`: a claim `FOR UPDATE SKIP LOCKED`) until `done`, at most
/// 50 rounds 50 ms apart, and returns how many it announced in all.
///
/// A test calls the sweep itself rather than wait for the server's next round (30 s). But the test server's
/// other sweeps run meanwhile: its notification sweep, every 200 ms in tests, briefly locks a request it
/// marks notified, and a sweep that finds the row locked skips it until its next round. So one call may
/// announce fewer than are due; what must hold is that each is announced exactly once, whoever announced it.
func sweepRounds(until done: () async throws -> Bool, _ sweep: () async throws -> Int) async throws -> Int {
    var announced = 0
    for _ in 0..<50 {
        if try await done() { break }
        announced += try await sweep()
        try await Task.sleep(for: .milliseconds(50))
    }
    return announced
}
