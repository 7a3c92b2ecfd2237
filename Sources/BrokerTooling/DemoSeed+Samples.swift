import BrokerDomain
import BrokerTestSupport
import Foundation
import Logging
import PostgresNIO

extension DemoSeed {
    /// Two weeks of readings for a demo person, ending yesterday, so *My data* has charts from the first
    /// start: hourly heart rate, a morning blood pressure, oxygen saturation, resting heart rate and HRV,
    /// steps as a phone writes them (a record every waking hour, summing to the day's total) and each
    /// night's sleep (beginning the evening before, so it counts for the morning it ends).
    /// Deterministic (a daily rhythm plus a fixed wobble), and stored through the same validated upload as
    /// the API's, so seeding twice stores nothing twice.
    static func demoSamples(days: Int = 14, endingOn lastDay: CalendarDate = CalendarDate.today.adding(days: -1)) -> [SampleBatch.Entry] {
        var entries: [SampleBatch.Entry] = []
        func add(_ type: SampleType, _ value: Double, day: CalendarDate, hour: Int) {
            let at = day.description + "T" + (hour < 10 ? "0" : "") + "\(hour):00:00Z"
            entries.append(SampleBatch.Entry(type: type.rawValue, value: (value * 10).rounded() / 10, at: at))
        }
        for offset in 0..<days {
            let day = lastDay.adding(days: offset - days + 1)
            let wobble = sin(Double(day.dayNumber) * 1.7)
            for hour in 0..<24 {
                // Lower at night, higher in the afternoon, with an evening walk.
                let rhythm = -8 * cos(Double(hour - 3) / 24 * 2 * .pi)
                add(.heartRate, 68 + rhythm + 3 * wobble + (hour == 18 ? 25 : 0), day: day, hour: hour)
            }
            add(.systolicPressure, 124 + 6 * wobble, day: day, hour: 7)
            add(.diastolicPressure, 81 + 4 * wobble, day: day, hour: 7)
            add(.oxygenSaturation, 97 + wobble, day: day, hour: 7)
            add(.restingHeartRate, 58 + 2 * wobble, day: day, hour: 8)
            add(.heartRateVariability, 45 + 8 * wobble, day: day, hour: 3)
            // 7,500 ± 2,500 steps in hourly records from 07:00 to 21:00 UTC (08:00–22:00 in Rome).
            let total = (7_500 + 2_500 * wobble).rounded()
            let weights = (7...21).map { 1 + 0.8 * sin(Double($0 * 7 + day.dayNumber)) }
            var left = total
            for (index, hour) in (7...21).enumerated() {
                let steps = hour == 21 ? left : (total * weights[index] / weights.reduce(0, +)).rounded()
                left -= steps
                add(.stepCount, steps, day: day, hour: hour)
            }
            add(.sleepingHours, 7.2 + 0.6 * wobble, day: day.adding(days: -1), hour: 22)
        }
        return entries
    }

    func storeDemoSamples(forUser id: UUID, client: DatabasePool, logger: Logger) async throws {
        // The seed acts as the person, who has just been created; no session exists, and `upload` reads only
        // the account id and role. The peer threshold plays no part in an upload.
        let principal = Principal(accountID: id, role: .user, credential: .session(tokenHash: Data()))
        _ = try await SampleService(client: client, groupMinCohort: 1).upload(
            Self.demoSamples(), timeZone: "Europe/Rome", by: principal, logger: logger)
    }
}
