import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// The issue's acceptance check: an iPhone's Health export, imported, draws daily step totals and nightly
/// sleep hours on the console that equal what the Health app shows for the same days — computed here from
/// the records the test writes (the day's sum of steps; the asleep stages of the night that ends that day).
@Suite("Imported export on the console")
struct ImportedChartTests {
    static let rome = TimeZone(identifier: "Europe/Rome")!

    /// Apple's date format, with the offset Rome has at that moment ("2026-11-20 08:00:00 +0100").
    static func appleDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = rome
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss xx"
        return formatter.string(from: date)
    }

    static func romeTime(_ day: CalendarDate, _ minutes: Int) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = rome
        let midnight = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day))!
        return midnight.addingTimeInterval(Double(minutes) * 60)
    }

    struct Export {
        var xml: String
        var steps: [String: Double] = [:]
        var sleep: [String: Double] = [:]
    }

    /// Seven recent days in Rome: 20–40 step records a day from the phone (two of them minutes from local
    /// midnight), and each night's sleep from the watch as Apple writes it (in bed, core, deep, REM, a few
    /// minutes awake, core again), with `HKTimeZone` metadata, plus a heart-rate reading or two.
    static func export(days: [CalendarDate]) -> Export {
        var records: [String] = []
        var result = Export(xml: "")
        var state: UInt64 = 42
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        func record(_ type: String, unit: String, start: Date, end: Date, value: String, source: String, metadata: String = "") {
            let head =
                #"<Record type="\#(type)" sourceName="\#(source)" sourceVersion="17.1" unit="\#(unit)" creationDate="\#(appleDate(end))" startDate="\#(appleDate(start))" endDate="\#(appleDate(end))" value="\#(value)""#
            records.append(metadata.isEmpty ? head + "/>" : head + ">" + metadata + "</Record>")
        }
        let zone = #"<MetadataEntry key="HKTimeZone" value="Europe/Rome"/>"#
        for day in days {
            var minutes = Set([3, 23 * 60 + 52])
            while minutes.count < 20 + next(21) { minutes.insert(7 * 60 + next(15 * 60)) }
            for minute in minutes.sorted() {
                let steps = 10 + next(600)
                record(
                    "HKQuantityTypeIdentifierStepCount", unit: "count", start: romeTime(day, minute), end: romeTime(day, minute + 4),
                    value: String(steps), source: "Laura’s iPhone")
                result.steps[day.description, default: 0] += Double(steps)
            }
            // The night that ends on the morning of `day`: stages in minutes relative to local midnight.
            let offset = next(40)
            // The first stages end before midnight, on the evening's date, as a watch writes them.
            let stages: [(String, Int, Int)] = [
                ("HKCategoryValueSleepAnalysisInBed", -95 + offset, 7 * 60 + 10 + offset),
                ("HKCategoryValueSleepAnalysisAsleepCore", -80 + offset, -45 + offset),
                ("HKCategoryValueSleepAnalysisAsleepDeep", -45 + offset, -15 + offset),
                ("HKCategoryValueSleepAnalysisAsleepCore", -15 + offset, 60 + offset),
                ("HKCategoryValueSleepAnalysisAsleepDeep", 60 + offset, 120 + offset),
                ("HKCategoryValueSleepAnalysisAsleepREM", 120 + offset, 160 + offset),
                ("HKCategoryValueSleepAnalysisAwake", 160 + offset, 170 + offset),
                ("HKCategoryValueSleepAnalysisAsleepCore", 170 + offset, 6 * 60 + 45 + offset),
            ]
            for (value, from, to) in stages {
                record(
                    "HKCategoryTypeIdentifierSleepAnalysis", unit: "", start: romeTime(day, from), end: romeTime(day, to),
                    value: value, source: "Laura’s Apple Watch", metadata: zone)
                if value.contains("Asleep") { result.sleep[day.description, default: 0] += Double(to - from) / 60 }
            }
            record(
                "HKQuantityTypeIdentifierHeartRate", unit: "count/min", start: romeTime(day, 600), end: romeTime(day, 600),
                value: String(60 + next(30)), source: "Laura’s Apple Watch")
        }
        result.xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE HealthData [
            <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord)*)>
            <!ATTLIST HealthData locale CDATA #REQUIRED>
            ]>
            <HealthData locale="it_IT">
             <ExportDate value="\(appleDate(Date()))"/>
             <Me HKCharacteristicTypeIdentifierDateOfBirth="1990-01-01" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale"/>
            \(records.joined(separator: "\n"))
            </HealthData>
            """
        return result
    }

    /// The console table's rows of one chart: day → the figure as printed.
    static func rows(of type: String, in page: String) throws -> [String: String] {
        let figure = try #require(page.range(of: #"data-type="\#(type)""#), "no \(type) chart on the page")
        let end = page[figure.upperBound...].range(of: "</figure>")!.lowerBound
        let chart = page[figure.upperBound..<end]
        var rows: [String: String] = [:]
        for row in chart.components(separatedBy: "<tr><td>").dropFirst() {
            let day = String(row.prefix { $0 != "<" })
            let total = try #require(row.range(of: #"<td class="total">"#), "\(type) is not drawn as totals")
            rows[day] = String(row[total.upperBound...].prefix { $0 != "<" })
        }
        return rows
    }

    @Test("an imported iPhone export charts the Health app's daily steps and nightly sleep, on Rome's days")
    func importedExportMatchesTheHealthApp() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let today = CalendarDate(Date(), in: Self.rome)
            let days = (1...7).map { today.adding(days: -$0) }.reversed().map { $0 }
            let export = Self.export(days: days)
            let imported = try await AppleHealthFixtures.post(
                harness, Array(export.xml.utf8), contentType: "application/xml", token: parties.person)
            #expect(imported.status == .ok, "import answered \(imported.status): \(harness.text(imported))")
            let me = try harness.object(try await harness.request(.get, "/v1/me", token: parties.person))
            #expect(me["timeZone"] as? String == "Europe/Rome", "the export's HKTimeZone becomes the person's zone")

            let browser = try await ConsoleBrowser.person(harness, parties)
            try await browser.get("/data")
            let steps = try Self.rows(of: "step_count", in: browser.lastPage)
            let sleep = try Self.rows(of: "sleeping_hours", in: browser.lastPage)
            // The days and figures as an English page writes them (the account is English).
            let english = ConsoleCatalog.shared.strings(for: .en)
            func written(_ figures: [String: Double]) -> [String: String] {
                Dictionary(uniqueKeysWithValues: figures.map { (english.day(CalendarDate(iso: $0.key)!), english.decimal($0.value)) })
            }
            #expect(steps == written(export.steps))
            #expect(sleep == written(export.sleep))
            // A night's sleep is several hours, not one stage's average, and steps thousands, not one record's.
            #expect(export.sleep.values.allSatisfy { $0 > 5 } && export.steps.values.allSatisfy { $0 > 2_000 })
        }
    }
}
