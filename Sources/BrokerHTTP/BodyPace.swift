/// The slowest a request body may arrive: like Apache's `mod_reqtimeout` (`body=…,MinRate=…`). A phone on
/// a poor link sends far faster than 1 KiB/s; a client that cannot is indistinguishable from a slow-drip attack.
struct BodyPace: Sendable {
    static let graceSeconds = 30
    static let minimumBytesPerSecond = 1024
    var started = ContinuousClock.now

    /// Whether `bytes` received by now keep the pace.
    func allows(_ bytes: Int) -> Bool {
        let elapsed = ContinuousClock.now - started
        let late = elapsed - .seconds(Self.graceSeconds)
        guard late > .zero else { return true }
        return Double(bytes) >= Double(Self.minimumBytesPerSecond) * (Double(late.components.seconds) + Double(late.components.attoseconds) / 1e18)
    }
}
