import BrokerTestSupport
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

@Suite("Slow-drip bodies")
struct BodyPaceTests {
    @Test("within the grace period any pace is allowed")
    func grace() {
        let pace = BodyPace(started: .now - .seconds(BodyPace.graceSeconds - 1))
        #expect(pace.allows(0))
    }

    @Test("after the grace period a body must average the minimum rate over the time past it")
    func minimumRate() {
        let pace = BodyPace(started: .now - .seconds(BodyPace.graceSeconds + 10))
        // Ten seconds late: at least ten seconds' worth of the minimum rate must have arrived.
        #expect(!pace.allows(9 * BodyPace.minimumBytesPerSecond))
        #expect(pace.allows(11 * BodyPace.minimumBytesPerSecond))
        // A slow-drip client sending a byte a second has ~40 bytes by now.
        #expect(!pace.allows(40))
    }

    @Test("the refusal is a 408 problem that closes the connection")
    func problem() {
        let problem = BodyTooSlow().problem
        #expect(problem.status == .requestTimeout)
        #expect(problem.headers[.connection] == "close")
    }
}
