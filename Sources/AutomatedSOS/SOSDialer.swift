import Foundation

/// Places the emergency call: the phone's dialer in the app, a command in `d4h sos`, a fake in tests.
public protocol SOSDialer: Sendable {
    func dial(for alert: SOSAlert) async throws
}
