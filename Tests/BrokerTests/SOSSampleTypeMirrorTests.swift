import AutomatedSOS
import BrokerTestSupport
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// AutomatedSOS cannot import the server's `SampleType` (it runs on the device), so it mirrors it: the same
/// names, and the same accepted ranges, so what the server would reject the monitor treats as a sensor fault.
@Suite struct SOSSampleTypeMirrorTests {
    @Test func theDeviceKnowsEveryServerSampleTypeWithTheSameRange() {
        #expect(SOSSampleType.allCases.map(\.rawValue).sorted() == SampleType.allCases.map(\.rawValue).sorted())
        for type in SampleType.allCases {
            #expect(SOSSampleType(rawValue: type.rawValue)?.plausibleRange == type.range, "\(type)")
        }
    }
}
