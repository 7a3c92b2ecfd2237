import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// An iPhone and an Apple Watch (and a sleep app) record the same walk and the same night: the Health app
/// counts each period once, from the source highest in its list. So does the import.
@Suite("Apple Health sources")
struct AppleHealthSourcesTests {
    typealias Chart = ImportedChartTests

    /// The union of periods, in hours: what is counted once however many sources recorded it.
    static func unionHours(_ periods: [(Date, Date)]) -> Double {
        var total = 0.0
        var reach: Date?
        for (start, end) in periods.sorted(by: { $0.0 < $1.0 }) {
            if let r = reach, start < r {
                if end > r {
                    total += end.timeIntervalSince(r)
                    reach = end
                }
            } else {
                total += end.timeIntervalSince(start)
                reach = end
            }
        }
        return total / 3600
    }

    static let watch =
        #"sourceName="Laura’s Apple Watch" device="&lt;&lt;HKDevice: 0x28&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2&gt;""#
    static let phone =
        #"sourceName="Laura’s iPhone" device="&lt;&lt;HKDevice: 0x29&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,5&gt;""#
    static let app = #"sourceName="AutoSleep""#

    static func steps(_ source: String, _ day: CalendarDate, _ from: Int, _ to: Int, _ value: Int) -> String {
        let start = Chart.appleDate(Chart.romeTime(day, from))
        let end = Chart.appleDate(Chart.romeTime(day, to))
        return
            #"<Record type="HKQuantityTypeIdentifierStepCount" \#(source) unit="count" startDate="\#(start)" endDate="\#(end)" value="\#(value)"/>"#
    }

    static func sleep(_ source: String, _ evening: CalendarDate, _ from: Int, _ to: Int, _ stage: String) -> String {
        let start = Chart.appleDate(Chart.romeTime(evening, from))
        let end = Chart.appleDate(Chart.romeTime(evening, to))
        return
            #"<Record type="HKCategoryTypeIdentifierSleepAnalysis" \#(source) unit="" startDate="\#(start)" endDate="\#(end)" value="HKCategoryValueSleepAnalysis\#(stage)"><MetadataEntry key="HKTimeZone" value="Europe/Rome"/></Record>"#
    }

    @Test("a watch and a phone recording the same walk and night count them once, the watch first")
    func overlappingSourcesCountOnce() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let day = CalendarDate(iso: "2026-11-10")!
            let evening = CalendarDate(iso: "2026-11-09")!
            let records = [
                Self.steps(Self.phone, day, 605, 615, 400),  // 10:05–10:15, half of it also on the watch: 200 count
                Self.steps(Self.watch, day, 600, 610, 500),  // 10:00–10:10
                Self.steps(Self.phone, day, 660, 670, 300),  // 11:00–11:10, the watch saw nothing then: 300
                Self.steps(Self.phone, day, 720, 725, 100),  // 12:00–12:05, inside the watch's 11:58–12:10: dropped
                Self.steps(Self.watch, day, 718, 730, 250),
                Self.sleep(Self.app, evening, 22 * 60 + 30, 30 * 60 + 30, "Asleep"),  // 22:30–06:30 from an app
                Self.sleep(Self.watch, evening, 23 * 60, 27 * 60, "AsleepCore"),  // 23:00–03:00
                Self.sleep(Self.watch, evening, 27 * 60, 30 * 60, "AsleepDeep"),  // 03:00–06:00
            ]
            let xml =
                #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n" + #"<HealthData locale="it_IT">"# + "\n"
                + #" <ExportDate value="\#(Chart.appleDate(Date()))"/>"# + "\n" + records.joined(separator: "\n") + "\n</HealthData>\n"
            let imported = try await AppleHealthFixtures.post(harness, Array(xml.utf8), contentType: "application/xml", token: token)
            #expect(imported.status == .ok, "\(harness.text(imported))")
            let skipped = try harness.object(imported)["skipped"] as? [[String: Any]] ?? []
            #expect(
                skipped.contains {
                    $0["reason"] as? String == "covered by a higher-priority source"
                        && $0["identifier"] as? String == "HKQuantityTypeIdentifierStepCount" && $0["count"] as? Int == 1
                }, "\(skipped)")

            let (_, stepDays) = try await StatisticsFixtures.statistics(harness, token, "type=step_count&from=2026-11-10&to=2026-11-10")
            #expect(stepDays.first.map { abs(($0.total ?? 0) - 1_250) < 1e-9 } == true, "\(stepDays), expected 500 + 200 + 300 + 250")
            // The night as the union of everything any source saw asleep: 22:30 to 06:30.
            let night = Self.unionHours([
                (Chart.romeTime(evening, 22 * 60 + 30), Chart.romeTime(evening, 30 * 60 + 30)),
                (Chart.romeTime(evening, 23 * 60), Chart.romeTime(evening, 27 * 60)),
                (Chart.romeTime(evening, 27 * 60), Chart.romeTime(evening, 30 * 60)),
            ])
            #expect(night == 8)
            let (_, sleepDays) = try await StatisticsFixtures.statistics(harness, token, "type=sleeping_hours&from=2026-11-09&to=2026-11-11")
            #expect(sleepDays.map(\.start) == ["2026-11-10"])
            #expect(sleepDays.first.map { abs(($0.total ?? 0) - night) < 1e-9 } == true, "\(sleepDays), expected \(night) h")
        }
    }

    @Test("priority: watches, then phones, then apps, each by name; a source is told by its device before its name")
    func sourcePriority() throws {
        var parser = AppleHealthParser(now: Date())
        parser.separatesSources = true
        let day = CalendarDate(iso: "2026-11-10")!
        let renamedWatch = #"sourceName="Polso" device="&lt;&lt;HKDevice: 0x30&gt;, name:Apple Watch, model:Watch&gt;""#
        let records = [
            Self.steps(Self.app, day, 1, 2, 1), Self.steps(Self.phone, day, 3, 4, 1), Self.steps(renamedWatch, day, 5, 6, 1),
            Self.steps(Self.watch, day, 7, 8, 1),
        ]
        let xml = #"<HealthData locale="it_IT">"# + records.joined() + "</HealthData>"
        #expect(try parser.feed(Array(xml.utf8)).isEmpty, "cumulative records wait for their sources to be resolved")
        try parser.finish()
        #expect(parser.takeSourcedRecords().count == 4)
        #expect(parser.sourcePriority.map { parser.sources[Int($0)].name } == ["Laura’s Apple Watch", "Polso", "Laura’s iPhone", "AutoSleep"])
    }
}
