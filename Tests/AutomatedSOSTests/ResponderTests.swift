import AutomatedSOS
import Foundation
import Testing

/// The countdown paths, on a clock that only the test moves.
@Suite struct ResponderTests {
    let alert = SOSAlert(rule: "heart_rate_low", type: .heartRate, comparison: .below, threshold: 40, value: 30, at: t0)

    @Test func dismissingCancelsTheCall() async {
        let clock = ManualClock()
        let dialer = RecordingDialer()
        let log = ActionLog()
        let responder = SOSResponder(clock: clock, prompter: ScriptedPrompter(answer: .dismiss, clock: clock), dialer: dialer)
        let outcome = await responder.respond(to: alert, record: log.append)
        #expect(outcome == .dismissed)
        #expect(log.names == ["prompted", "dismissed"])
        #expect(dialer.placed.isEmpty)
    }

    @Test func confirmingCallsAtOnce() async {
        let clock = ManualClock()
        let dialer = RecordingDialer()
        let log = ActionLog()
        let responder = SOSResponder(
            clock: clock, prompter: ScriptedPrompter(answer: .confirm, answerAt: t0.addingTimeInterval(4), clock: clock), dialer: dialer)
        let outcome = await responder.respond(to: alert) { action, time in
            log.append(action, time)
            if case .prompted = action { clock.advance(by: 4) }
        }
        #expect(outcome == .calledOnConfirm)
        #expect(log.names == ["prompted", "confirmed", "dialed"])
        // Called at 4 s, when the person confirmed, not at the end of the 30 s countdown.
        #expect(log.all.last?.1 == t0.addingTimeInterval(4))
        #expect(dialer.placed == [alert])
    }

    @Test func silenceCallsWhenTheCountdownEnds() async {
        let clock = ManualClock()
        let dialer = RecordingDialer()
        let log = ActionLog()
        let responder = SOSResponder(clock: clock, prompter: ScriptedPrompter(answer: nil, clock: clock), dialer: dialer)
        let outcome = await responder.respond(to: alert) { action, time in
            log.append(action, time)
            if case .prompted = action { clock.advance(by: 30) }
        }
        #expect(outcome == .calledOnSilence)
        #expect(log.names == ["prompted", "countdown_ended", "dialed"])
        if case .prompted(let deadline) = log.all.first?.0 { #expect(deadline == t0.addingTimeInterval(30)) } else { Issue.record("no prompt") }
        #expect(dialer.placed == [alert])
    }

    @Test func silenceBeforeTheDeadlineDoesNotCall() async {
        let clock = ManualClock()
        let dialer = RecordingDialer()
        let responder = SOSResponder(
            clock: clock, prompter: ScriptedPrompter(answer: .dismiss, answerAt: t0.addingTimeInterval(29), clock: clock), dialer: dialer)
        // The person answers at 29 s of a 30 s countdown: still in time.
        let outcome = await responder.respond(to: alert) { action, _ in if case .prompted = action { clock.advance(by: 29) } }
        #expect(outcome == .dismissed)
        #expect(dialer.placed.isEmpty)
    }

    @Test func promptOnlyNeverCallsOnSilence() async {
        let clock = ManualClock()
        let dialer = RecordingDialer()
        let log = ActionLog()
        let responder = SOSResponder(
            configuration: SOSResponderConfiguration(countdown: 10, callOnSilence: false), clock: clock,
            prompter: ScriptedPrompter(answer: nil, clock: clock), dialer: dialer)
        let outcome = await responder.respond(to: alert) { action, time in
            log.append(action, time)
            if case .prompted = action { clock.advance(by: 10) }
        }
        #expect(outcome == .expired)
        #expect(log.names == ["prompted", "countdown_ended"])
        #expect(dialer.placed.isEmpty)
    }

    @Test func aFailedCallIsReported() async {
        let clock = ManualClock()
        let log = ActionLog()
        let responder = SOSResponder(clock: clock, prompter: ScriptedPrompter(answer: .confirm, clock: clock), dialer: RecordingDialer(fails: true))
        let outcome = await responder.respond(to: alert, record: log.append)
        #expect(outcome == .dialFailed)
        #expect(log.names == ["prompted", "confirmed", "dial_failed"])
    }
}
