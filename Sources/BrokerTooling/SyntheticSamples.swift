import BrokerDomain
import BrokerTestSupport
import Foundation

/// Writes one synthetic person's samples, and the daily rollups of exactly those samples, as COPY text.
///
/// Values are kept in hundredths of the unit and are whole numbers wherever a type has several samples a day,
/// so every sum is exact and the rollups equal what PostgreSQL would compute from the samples in any order.
struct SyntheticSamples {
    let seed: UInt64
    let firstDay: Int
    let days: Int
    /// The calendar date of each day, worked out once rather than on every row.
    private let dates: [CalendarDate]

    init(seed: UInt64, firstDay: Int, days: Int) {
        self.seed = seed
        self.firstDay = firstDay
        self.days = days
        dates = (0..<days).map { CalendarDate(dayNumber: firstDay + $0)! }
    }

    /// Italy's winter offset: people sleep and wake by their local clock, samples are stored in UTC.
    private static let localOffsetHours = 1

    /// What was written for one person.
    struct Written {
        var samples = 0
        var rollups = 0
    }

    func write(_ person: SyntheticPerson, samples: CopyTextChunks, rollups: CopyTextChunks) -> Written {
        var out = PersonRows(person: person, dates: dates, samples: samples, rollups: rollups)
        let gaps = gapDays(person)
        func stream(_ purpose: SyntheticPerson.Stream) -> SeededRandom {
            SeededRandom(seed: seed, UInt64(person.number), purpose.rawValue)
        }

        // Heart rate, hourly: a per-person resting rate, lowest around 4 a.m., higher while awake, with the
        // odd burst of exercise; the device misses a reading now and then.
        var random = stream(.heartRate)
        for day in 0..<days where !gaps[day] {
            for hour in 0..<24 {
                let missed = random.chance(0.04)
                let local = Double((hour + Self.localOffsetHours) % 24)
                let awake = local >= 7 && local < 23
                let exercise = awake && local >= 9 && local < 21 && random.chance(0.05) ? random.uniform(25, 60) : 0
                let rhythm = -7 * cos(2 * Double.pi * (local - 4) / 24)
                let rate = person.restingHeartRate + rhythm + (awake ? 5 : 0) + exercise + random.normal(deviation: 3)
                if !missed { out.emit(.heartRate, day: day, secondOfDay: out.secondOfDay(hour: hour), whole: rate, 38...195) }
            }
        }

        // Blood pressure: most mornings, some evenings, rising with age; diastolic always well below systolic.
        random = stream(.pressure)
        var pressure: [(day: Int, second: Int, systolic: Int, diastolic: Int)] = []
        pressure.reserveCapacity(days * 2)
        let ageAbove20 = Double(person.age - 20)
        for day in 0..<days where !gaps[day] {
            for (hour, chance) in [(6, 0.85), (20, person.eveningPressureChance)] where random.chance(chance) {
                let evening = hour == 20 ? -2.0 : 0
                let systolic = Self.clamp(
                    105 + 0.5 * ageAbove20 + person.systolicOffset + evening + random.normal(deviation: 6), 85...220)
                let diastolic = min(
                    systolic - 20,
                    Self.clamp(70 + 0.25 * ageAbove20 + person.diastolicOffset + random.normal(deviation: 4), 50...130))
                pressure.append((day, out.secondOfDay(hour: hour), systolic, diastolic))
            }
        }
        for reading in pressure {
            out.emit(.systolicPressure, day: reading.day, secondOfDay: reading.second, hundredths: reading.systolic * 100)
        }
        for reading in pressure {
            out.emit(.diastolicPressure, day: reading.day, secondOfDay: reading.second, hundredths: reading.diastolic * 100)
        }

        // Oxygen saturation: a spot check on about one day in three.
        random = stream(.oxygen)
        for day in 0..<days where !gaps[day] && random.chance(0.3) {
            let hour = 8 + random.below(12)
            let value = 97.5 + random.normal(deviation: 1) - (person.age > 70 ? 1 : 0)
            out.emit(.oxygenSaturation, day: day, secondOfDay: out.secondOfDay(hour: hour), whole: value, 90...100)
        }

        // Activity, one total per day late in the evening: steps (weekends differ, per person), and distance,
        // active energy and standing hours that follow from them.
        random = stream(.activity)
        var steps: [Int?] = []
        steps.reserveCapacity(days)
        for day in 0..<days {
            let weekend = CalendarDate.weekday(ofDayNumber: firstDay + day) >= 5
            let value = person.dailySteps * (weekend ? person.weekendStepFactor : 1) * exp(random.normal(deviation: 0.35))
            steps.append(gaps[day] ? nil : Self.clamp(value, 0...60_000))
        }
        let evening = out.secondOfDay(hour: 22)
        for day in 0..<days { if let count = steps[day] { out.emit(.stepCount, day: day, secondOfDay: evening, hundredths: count * 100) } }
        let stride = person.heightCm * 0.0041
        for day in 0..<days {
            if let count = steps[day] {
                out.emit(
                    .distanceWalkingRunning, day: day, secondOfDay: evening,
                    whole: Double(count) * stride * random.uniform(0.95, 1.05), 0...200_000)
            }
        }
        for day in 0..<days {
            if let count = steps[day] {
                let energy = Double(count) * 0.045 * person.weightKg / 70 + random.normal(mean: 60, deviation: 20)
                out.emit(.activeEnergyBurned, day: day, secondOfDay: evening, whole: energy, 0...3_000)
            }
        }
        for day in 0..<days {
            if let count = steps[day] {
                out.emit(
                    .standingHours, day: day, secondOfDay: evening,
                    whole: 6 + Double(count) / 2_000 + random.normal(deviation: 1.5), 1...16)
            }
        }

        // Sleep, to the quarter hour, a little longer at weekends; one sample a day at 05:xx UTC. Its day by
        // sample_day (end plus six hours) is that same day, which is the day its rollup is written for.
        random = stream(.sleep)
        for day in 0..<days where !gaps[day] {
            let weekend = CalendarDate.weekday(ofDayNumber: firstDay + day) >= 5
            let hours = min(11, max(3.5, person.sleepNeed + (weekend ? 0.6 : 0) + random.normal(deviation: 0.7)))
            out.emit(.sleepingHours, day: day, secondOfDay: out.secondOfDay(hour: 5), hundredths: Int((hours * 4).rounded()) * 25)
        }

        // Weight weekly on the person's own weekday, drifting slowly; height once, on the first day with data.
        random = stream(.weight)
        let trendPerWeek = random.normal(deviation: 0.08)
        let weighDay = person.number % 7
        for day in 0..<days where !gaps[day] && CalendarDate.weekday(ofDayNumber: firstDay + day) == weighDay {
            let kilograms = person.weightKg + trendPerWeek * Double(day) / 7 + random.normal(deviation: 0.4)
            let tenths = Int((min(250, max(35, kilograms)) * 10).rounded())
            out.emit(.weight, day: day, secondOfDay: out.secondOfDay(hour: 6), hundredths: tenths * 10)
        }
        if let day = gaps.firstIndex(of: false) {
            out.emit(.height, day: day, secondOfDay: out.secondOfDay(hour: 6), whole: person.heightCm, 140...210)
        }

        out.flushRollup()
        return out.written
    }

    /// Days without any data: now and then a run of one to four days.
    private func gapDays(_ person: SyntheticPerson) -> [Bool] {
        var random = SeededRandom(seed: seed, UInt64(person.number), SyntheticPerson.Stream.gaps.rawValue)
        var gaps = [Bool](repeating: false, count: days)
        var remaining = 0
        for day in 0..<days {
            if remaining == 0, random.chance(person.gapChance) { remaining = 1 + random.below(4) }
            if remaining > 0 {
                gaps[day] = true
                remaining -= 1
            }
        }
        return gaps
    }

    private static func clamp(_ value: Double, _ range: ClosedRange<Int>) -> Int {
        min(range.upperBound, max(range.lowerBound, Int(value.rounded())))
    }

    /// The rows of one person: numbers arrivals 1…n in writing order and folds each sample into its day's rollup.
    /// Callers write each type's samples together and in time order, so a rollup is complete when (type, day) changes.
    private struct PersonRows {
        let person: SyntheticPerson
        let dates: [CalendarDate]
        let samples: CopyTextChunks
        let rollups: CopyTextChunks
        let idText: [UInt8]
        var written = Written()

        private var rollupType: SampleType?
        private var rollupDay = 0
        private var count = 0
        private var sum = 0.0, sumOfSquares = 0.0, minimum = 0.0, maximum = 0.0

        init(person: SyntheticPerson, dates: [CalendarDate], samples: CopyTextChunks, rollups: CopyTextChunks) {
            self.person = person
            self.dates = dates
            self.samples = samples
            self.rollups = rollups
            idText = Array(person.id.uuidString.lowercased().utf8)
        }

        /// The person's device reports at the same minute and second of each hour.
        func secondOfDay(hour: Int) -> Int {
            hour * 3600 + person.minuteOfHour * 60 + person.secondOfMinute
        }

        mutating func emit(_ type: SampleType, day: Int, secondOfDay: Int, whole value: Double, _ bounds: ClosedRange<Int>) {
            emit(type, day: day, secondOfDay: secondOfDay, hundredths: SyntheticSamples.clamp(value, bounds) * 100)
        }

        mutating func emit(_ type: SampleType, day: Int, secondOfDay: Int, hundredths: Int) {
            written.samples += 1
            idText.withUnsafeBufferPointer { samples.put($0) }
            samples.tab()
            samples.put(decimal: Int(type.code))
            samples.tab()
            samples.put(date: dates[day], secondOfDay: secondOfDay)
            samples.tab()
            samples.put(hundredths: hundredths)
            samples.tab()
            samples.put(decimal: written.samples)
            samples.endRow()

            if type != rollupType || day != rollupDay {
                flushRollup()
                rollupType = type
                rollupDay = day
            }
            let value = Double(hundredths) / 100
            if count == 0 {
                minimum = value
                maximum = value
            } else {
                minimum = min(minimum, value)
                maximum = max(maximum, value)
            }
            count += 1
            sum += value
            sumOfSquares += value * value
        }

        mutating func flushRollup() {
            guard let type = rollupType, count > 0 else { return }
            idText.withUnsafeBufferPointer { rollups.put($0) }
            rollups.tab()
            rollups.put(decimal: Int(type.code))
            rollups.tab()
            rollups.put(date: dates[rollupDay])
            rollups.tab()
            rollups.put(decimal: count)
            rollups.tab()
            rollups.put(double: sum)
            rollups.tab()
            rollups.put(double: sumOfSquares)
            rollups.tab()
            rollups.put(double: minimum)
            rollups.tab()
            rollups.put(double: maximum)
            rollups.endRow()
            written.rollups += 1
            count = 0
            sum = 0
            sumOfSquares = 0
        }
    }
}
