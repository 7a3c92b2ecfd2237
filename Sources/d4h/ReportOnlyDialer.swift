import ArgumentParser
import AutomatedSOS
import BrokerDomain
import BrokerServer
import CommandLineSupport
import Foundation

/// Places no call: the `dialed` line is the report.
struct ReportOnlyDialer: SOSDialer {
    func dial(for alert: SOSAlert) async throws {}
}
