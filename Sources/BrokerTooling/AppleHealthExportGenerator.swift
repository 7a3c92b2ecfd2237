import BrokerDomain
import BrokerTestSupport
import Foundation

/// Writes synthetic but realistic Apple Health `export.xml` files, streamed to disk, for benchmarks and load tests.
/// Like Apple's: every blood pressure reading appears three times (its two records on their own, and again
/// inside its correlation), and sleep records carry the device's time zone (`HKTimeZone`).
package enum AppleHealthExportGenerator {
    /// Writes about `approximateBytes` (never less than the header and footer) of export.xml to `url`, the same bytes
    /// for the same seed; returns the size written. Memory stays at one 1 MiB buffer whatever the size.
    @discardableResult
    package static func write(to url: URL, approximateBytes: Int, seed: UInt64) throws -> Int {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var writer = Writer(handle: handle)
        var random = SplitMix64(seed: seed)
        writer.append(header)
        // Like Apple's: records grouped by type (each in time order), then correlations, workouts, activity summaries.
        // Each section gets its share of what is left, so that one writing more or less than its share (blood
        // pressure writes as many readings as its first part did) does not change the file's size.
        var weights = sections.reduce(0) { $0 + $1.weight }
        var readings = 0
        for section in sections {
            let left = Double(max(approximateBytes - writer.written - footer.utf8.count, 0))
            let budget = Int(left * section.weight / weights)
            weights -= section.weight
            if let part = section.bloodPressure {
                if part == .diastolic {
                    readings = writeFirstBloodPressurePart(&writer, budget: budget, seed: seed)
                } else {
                    for k in 0..<readings { writeBloodPressure(part, &writer, bloodPressureReading(k, of: readings, seed: seed)) }
                }
                continue
            }
            let end = writer.written + budget
            var time = start
            while writer.written < end {
                let before = writer.written
                section.write(&writer, &random, time)
                // Spread each type over the whole window whatever the file's size, so that every sample is in the past.
                let mean = Double(window) * Double(writer.written - before) / Double(max(budget, 1))
                time += max(1, Int(mean * Double.random(in: 0.5...1.5, using: &random)))
            }
        }
        writer.append(footer)
        try writer.flush()
        return writer.written
    }

    /// 2015-01-01 00:00:00 UTC: each type's records start there and move forward over nine years.
    private static let start = 1_420_070_400
    private static let window = 9 * 365 * 86_400

    private static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!-- HealthKit Export Version: 13 -->
        <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord|Audiogram|VisionPrescription)*)>
        <!ATTLIST HealthData
          locale CDATA #REQUIRED
        >
        <!ELEMENT ExportDate EMPTY>
        <!ATTLIST ExportDate
          value CDATA #REQUIRED
        >
        <!ELEMENT Me EMPTY>
        <!ATTLIST Me
          HKCharacteristicTypeIdentifierDateOfBirth         CDATA #REQUIRED
          HKCharacteristicTypeIdentifierBiologicalSex       CDATA #REQUIRED
          HKCharacteristicTypeIdentifierBloodType           CDATA #REQUIRED
          HKCharacteristicTypeIdentifierFitzpatrickSkinType CDATA #REQUIRED
          HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse CDATA #REQUIRED
        >
        <!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
        <!ATTLIST Record
          type          CDATA #REQUIRED
          unit          CDATA #IMPLIED
          value         CDATA #IMPLIED
          sourceName    CDATA #REQUIRED
          sourceVersion CDATA #IMPLIED
          device        CDATA #IMPLIED
          creationDate  CDATA #IMPLIED
          startDate     CDATA #REQUIRED
          endDate       CDATA #REQUIRED
        >
        <!-- Note: Any Records that appear as children of a correlation also appear as top-level records in this document. -->
        <!ELEMENT Correlation ((MetadataEntry|Record)*)>
        <!ATTLIST Correlation
          type          CDATA #REQUIRED
          sourceName    CDATA #REQUIRED
          sourceVersion CDATA #IMPLIED
          device        CDATA #IMPLIED
          creationDate  CDATA #IMPLIED
          startDate     CDATA #REQUIRED
          endDate       CDATA #REQUIRED
        >
        <!ELEMENT Workout ((MetadataEntry|WorkoutEvent|WorkoutRoute|WorkoutStatistics)*)>
        <!ATTLIST Workout
          workoutActivityType   CDATA #REQUIRED
          duration              CDATA #IMPLIED
          durationUnit          CDATA #IMPLIED
          sourceName            CDATA #REQUIRED
          startDate             CDATA #REQUIRED
          endDate               CDATA #REQUIRED
        >
        <!ELEMENT MetadataEntry EMPTY>
        <!ATTLIST MetadataEntry
          key   CDATA #REQUIRED
          value CDATA #REQUIRED
        >
        <!ELEMENT HeartRateVariabilityMetadataList (InstantaneousBeatsPerMinute*)>
        <!ELEMENT InstantaneousBeatsPerMinute EMPTY>
        <!ATTLIST InstantaneousBeatsPerMinute
          bpm  CDATA #REQUIRED
          time CDATA #REQUIRED
        >
        <!ELEMENT ActivitySummary EMPTY>
        <!ATTLIST ActivitySummary
          dateComponents           CDATA #IMPLIED
          activeEnergyBurned       CDATA #IMPLIED
          activeEnergyBurnedGoal   CDATA #IMPLIED
          activeEnergyBurnedUnit   CDATA #IMPLIED
          appleExerciseTime        CDATA #IMPLIED
          appleStandHours          CDATA #IMPLIED
        >
        ]>
        <HealthData locale="en_GB">
         <ExportDate value="2024-06-01 09:00:00 +0100"/>
         <Me HKCharacteristicTypeIdentifierDateOfBirth="1985-04-12" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale" HKCharacteristicTypeIdentifierBloodType="HKBloodTypeNotSet" HKCharacteristicTypeIdentifierFitzpatrickSkinType="HKFitzpatrickSkinTypeNotSet" HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse="None"/>

        """

    private static let footer = "</HealthData>\n"

    private static let watch =
        #"sourceName="Jane’s Apple Watch" sourceVersion="10.1" device="&lt;&lt;HKDevice: 0x2837a1e50&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:10.1&gt;""#
    private static let phone =
        #"sourceName="Jane’s iPhone" sourceVersion="17.1" device="&lt;&lt;HKDevice: 0x2837a2b70&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,5, software:17.1&gt;""#
    private static let scale = #"sourceName="Withings" sourceVersion="6.3.1""#

    /// One kind of element and its share of the file.
    private struct Section {
        var weight: Double
        var bloodPressure: BloodPressurePart?
        var write: @Sendable (inout Writer, inout SplitMix64, Int) -> Void

        init(weight: Double, bloodPressure: BloodPressurePart? = nil, write: @escaping @Sendable (inout Writer, inout SplitMix64, Int) -> Void) {
            self.weight = weight
            self.bloodPressure = bloodPressure
            self.write = write
        }
    }

    /// Where a blood pressure reading appears: its two records among the records (grouped by type, as Apple
    /// groups them), then the correlation holding copies of both.
    private enum BloodPressurePart {
        case diastolic, systolic, correlation
    }

    /// Reading `k` of `count`, the same in all three parts: its own generator, seeded from the file's and `k`.
    private static func bloodPressureReading(_ k: Int, of count: Int, seed: UInt64) -> (time: Int, systolic: Int, diastolic: Int) {
        var random = SplitMix64(seed: seed ^ 0xB100_D000 ^ (UInt64(k) &* 0x9E37_79B9_7F4A_7C15))
        let spacing = window / max(count, 1)
        let jitter = k == 0 ? 0 : Int.random(in: 0..<max(1, spacing / 2), using: &random)
        return (start + k * spacing + jitter, Int.random(in: 100...150, using: &random), Int.random(in: 60...95, using: &random))
    }

    /// Writes the diastolic records until `budget` is spent; returns how many, which the other parts repeat.
    /// The first record tells the size of all (every field has a fixed width), hence the count and spacing.
    private static func writeFirstBloodPressurePart(_ writer: inout Writer, budget: Int, seed: UInt64) -> Int {
        guard budget > 0 else { return 0 }
        let before = writer.written
        writeBloodPressure(.diastolic, &writer, bloodPressureReading(0, of: 1, seed: seed))
        let count = max(1, budget / max(writer.written - before, 1))
        for k in 1..<max(count, 1) { writeBloodPressure(.diastolic, &writer, bloodPressureReading(k, of: count, seed: seed)) }
        return count
    }

    private static func writeBloodPressure(
        _ part: BloodPressurePart, _ writer: inout Writer, _ reading: (time: Int, systolic: Int, diastolic: Int)
    ) {
        func record(_ name: String, _ value: Int, indent: String) {
            writer.append(indent + #"<Record type="HKQuantityTypeIdentifierBloodPressure"#)
            writer.append(name)
            writer.append(#"" "#)
            writer.append(phone)
            writer.append(#" unit="mmHg" creationDate=""#)
            writer.appendDate(reading.time)
            writer.append(#"" startDate=""#)
            writer.appendDate(reading.time)
            writer.append(#"" endDate=""#)
            writer.appendDate(reading.time)
            writer.append(#"" value=""#)
            writer.appendNumber(Double(value), decimals: 0)
            writer.append("\">\n\(indent) <MetadataEntry key=\"HKWasUserEntered\" value=\"1\"/>\n\(indent)</Record>\n")
        }
        switch part {
        case .diastolic: record("Diastolic", reading.diastolic, indent: " ")
        case .systolic: record("Systolic", reading.systolic, indent: " ")
        case .correlation:
            writer.append(#" <Correlation type="HKCorrelationTypeIdentifierBloodPressure" "#)
            writer.append(phone)
            writer.append(#" creationDate=""#)
            writer.appendDate(reading.time)
            writer.append(#"" startDate=""#)
            writer.appendDate(reading.time)
            writer.append(#"" endDate=""#)
            writer.appendDate(reading.time)
            writer.append("\">\n  <MetadataEntry key=\"HKWasUserEntered\" value=\"1\"/>\n")
            record("Diastolic", reading.diastolic, indent: "  ")
            record("Systolic", reading.systolic, indent: "  ")
            writer.append(" </Correlation>\n")
        }
    }

    private static func quantity(
        _ type: String, _ source: String, units: [String],
        value: @escaping @Sendable (inout SplitMix64, String) -> (Double, Int), metadata: String? = nil, weight: Double
    ) -> Section {
        Section(weight: weight) { writer, random, time in
            let unit = units[Int.random(in: 0..<units.count, using: &random)]
            let (number, decimals) = value(&random, unit)
            writer.append(#" <Record type=""#)
            writer.append(type)
            writer.append(#"" "#)
            writer.append(source)
            writer.append(#" unit=""#)
            writer.append(unit)
            writer.append(#"" creationDate=""#)
            writer.appendDate(time + 60)
            writer.append(#"" startDate=""#)
            writer.appendDate(time)
            writer.append(#"" endDate=""#)
            writer.appendDate(time + 60)
            writer.append(#"" value=""#)
            writer.appendNumber(number, decimals: decimals)
            if let metadata {
                writer.append("\">\n  <MetadataEntry key=\"")
                writer.append(metadata)
                writer.append("\" value=\"0\"/>\n </Record>\n")
            } else {
                writer.append("\"/>\n")
            }
        }
    }

    private static func category(
        _ type: String, _ source: String, values: [String], lasting: ClosedRange<Int>, timeZone: String? = nil, weight: Double
    ) -> Section {
        Section(weight: weight) { writer, random, time in
            writer.append(#" <Record type=""#)
            writer.append(type)
            writer.append(#"" "#)
            writer.append(source)
            writer.append(#" creationDate=""#)
            let end = time + Int.random(in: lasting, using: &random)
            writer.appendDate(end)
            writer.append(#"" startDate=""#)
            writer.appendDate(time)
            writer.append(#"" endDate=""#)
            writer.appendDate(end)
            writer.append(#"" value=""#)
            writer.append(values[Int.random(in: 0..<values.count, using: &random)])
            if let timeZone {
                writer.append("\">\n  <MetadataEntry key=\"HKTimeZone\" value=\"")
                writer.append(timeZone)
                writer.append("\"/>\n </Record>\n")
            } else {
                writer.append("\"/>\n")
            }
        }
    }

    private static let sections: [Section] = [
        quantity(
            "HKQuantityTypeIdentifierActiveEnergyBurned", watch, units: ["kcal", "kcal", "kcal", "kJ"],
            value: { random, unit in (Double.random(in: 0.1...(unit == "kJ" ? 80 : 20), using: &random), 3) }, weight: 15),
        quantity(
            "HKQuantityTypeIdentifierBasalEnergyBurned", watch, units: ["kcal"],
            value: { random, _ in (Double.random(in: 0.5...5, using: &random), 3) }, weight: 10),
        quantity(
            "HKQuantityTypeIdentifierBloodGlucose", phone, units: ["mg/dL", "mmol<180.1558800000541>/L"],
            value: { random, unit in
                unit == "mg/dL" ? (Double(Int.random(in: 70...180, using: &random)), 0) : (Double.random(in: 3.9...10, using: &random), 1)
            }, weight: 0.2),
        Section(weight: 0.3, bloodPressure: .diastolic) { _, _, _ in },
        Section(weight: 0.3, bloodPressure: .systolic) { _, _, _ in },
        quantity(
            "HKQuantityTypeIdentifierBodyMass", scale, units: ["kg", "lb"],
            value: { random, unit in (Double.random(in: 60...80, using: &random) * (unit == "lb" ? 2.204_62 : 1), 1) }, weight: 0.5),
        quantity(
            "HKQuantityTypeIdentifierBodyTemperature", phone, units: ["degC", "degF"],
            value: { random, unit in
                (unit == "degC" ? Double.random(in: 36...37.8, using: &random) : Double.random(in: 96.8...100, using: &random), 1)
            }, weight: 0.1),
        quantity(
            "HKQuantityTypeIdentifierDistanceWalkingRunning", phone, units: ["km", "km", "mi"],
            value: { random, _ in (Double.random(in: 0.001...0.8, using: &random), 5) }, weight: 10),
        quantity(
            "HKQuantityTypeIdentifierFlightsClimbed", phone, units: ["count"],
            value: { random, _ in (Double(Int.random(in: 1...5, using: &random)), 0) }, weight: 2),
        quantity(
            "HKQuantityTypeIdentifierHeadphoneAudioExposure", phone, units: ["dBASPL"],
            value: { random, _ in (Double.random(in: 40...90, using: &random), 4) }, weight: 3),
        quantity(
            "HKQuantityTypeIdentifierHeartRate", watch, units: ["count/min"],
            value: { random, _ in (Double(Int.random(in: 50...150, using: &random)), 0) },
            metadata: "HKMetadataKeyHeartRateMotionContext", weight: 30),
        Section(weight: 1.5) { writer, random, time in
            writer.append(#" <Record type="HKQuantityTypeIdentifierHeartRateVariabilitySDNN" "#)
            writer.append(watch)
            writer.append(#" unit="ms" creationDate=""#)
            writer.appendDate(time + 60)
            writer.append(#"" startDate=""#)
            writer.appendDate(time)
            writer.append(#"" endDate=""#)
            writer.appendDate(time + 60)
            writer.append(#"" value=""#)
            writer.appendNumber(Double.random(in: 20...80, using: &random), decimals: 4)
            writer.append("\">\n  <HeartRateVariabilityMetadataList>\n")
            for beat in 0..<8 {
                writer.append("   <InstantaneousBeatsPerMinute bpm=\"")
                writer.appendNumber(Double(Int.random(in: 55...90, using: &random)), decimals: 0)
                writer.append("\" time=\"8:")
                writer.appendNumber(Double(10 + beat), decimals: 0)
                writer.append(":00.00 AM\"/>\n")
            }
            writer.append("  </HeartRateVariabilityMetadataList>\n </Record>\n")
        },
        quantity(
            "HKQuantityTypeIdentifierHeight", phone, units: ["cm", "ft"],
            value: { _, unit in unit == "ft" ? (5.5774, 4) : (170, 0) }, weight: 0.05),
        quantity(
            "HKQuantityTypeIdentifierOxygenSaturation", watch, units: ["%"],
            value: { random, _ in (Double(Int.random(in: 92...100, using: &random)) / 100, 2) }, weight: 3),
        quantity(
            "HKQuantityTypeIdentifierRespiratoryRate", watch, units: ["count/min"],
            value: { random, _ in (Double.random(in: 12...20, using: &random), 1) }, weight: 1.5),
        quantity(
            "HKQuantityTypeIdentifierRestingHeartRate", watch, units: ["count/min"],
            value: { random, _ in (Double(Int.random(in: 50...75, using: &random)), 0) }, weight: 0.2),
        quantity(
            "HKQuantityTypeIdentifierStepCount", phone, units: ["count"],
            value: { random, _ in (Double(Int.random(in: 1...1500, using: &random)), 0) }, weight: 15),
        quantity(
            "HKQuantityTypeIdentifierVO2Max", watch, units: ["mL/min·kg"],
            value: { random, _ in (Double.random(in: 30...50, using: &random), 2) }, weight: 0.1),
        category(
            "HKCategoryTypeIdentifierAppleStandHour", watch,
            values: ["HKCategoryValueAppleStandHourStood", "HKCategoryValueAppleStandHourIdle"], lasting: 3600...3600, weight: 3),
        category(
            "HKCategoryTypeIdentifierSleepAnalysis", watch,
            values: [
                "HKCategoryValueSleepAnalysisInBed", "HKCategoryValueSleepAnalysisAsleepCore",
                "HKCategoryValueSleepAnalysisAsleepDeep", "HKCategoryValueSleepAnalysisAsleepREM",
                "HKCategoryValueSleepAnalysisAwake",
            ], lasting: 300...5400, timeZone: "Europe/Rome", weight: 3),
        Section(weight: 0.6, bloodPressure: .correlation) { _, _, _ in },
        Section(weight: 1) { writer, random, time in
            let minutes = Double.random(in: 20...90, using: &random)
            writer.append(#" <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration=""#)
            writer.appendNumber(minutes, decimals: 6)
            writer.append(#"" durationUnit="min" "#)
            writer.append(watch)
            writer.append(#" creationDate=""#)
            writer.appendDate(time + Int(minutes * 60))
            writer.append(#"" startDate=""#)
            writer.appendDate(time)
            writer.append(#"" endDate=""#)
            writer.appendDate(time + Int(minutes * 60))
            writer.append("\">\n  <MetadataEntry key=\"HKIndoorWorkout\" value=\"0\"/>\n")
            writer.append("  <WorkoutStatistics type=\"HKQuantityTypeIdentifierHeartRate\" startDate=\"")
            writer.appendDate(time)
            writer.append("\" endDate=\"")
            writer.appendDate(time + Int(minutes * 60))
            writer.append("\" average=\"142\" minimum=\"98\" maximum=\"171\" unit=\"count/min\"/>\n")
            writer.append("  <WorkoutRoute sourceName=\"Jane’s Apple Watch\">\n   <FileReference path=\"/workout-routes/route_")
            writer.appendDate(time)
            writer.append(".gpx\"/>\n  </WorkoutRoute>\n </Workout>\n")
        },
        Section(weight: 1) { writer, random, time in
            writer.append(#" <ActivitySummary dateComponents=""#)
            writer.appendDate(time)
            writer.append(#"" activeEnergyBurned=""#)
            writer.appendNumber(Double.random(in: 200...900, using: &random), decimals: 3)
            writer.append("\" activeEnergyBurnedGoal=\"500\" activeEnergyBurnedUnit=\"Cal\" appleExerciseTime=\"")
            writer.appendNumber(Double(Int.random(in: 0...90, using: &random)), decimals: 0)
            writer.append("\" appleStandHours=\"12\"/>\n")
        },
    ]

    /// A small, fast, seedable generator (SplitMix64), so that one seed always gives the same export.
    private struct SplitMix64: RandomNumberGenerator {
        private var state: UInt64

        init(seed: UInt64) { state = seed }

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Buffers output and writes it in 1 MiB pieces.
    private struct Writer {
        let handle: FileHandle
        var buffer: [UInt8] = []
        var written = 0
        var error: (any Error)?

        init(handle: FileHandle) {
            self.handle = handle
            buffer.reserveCapacity(1 << 20 + 4096)
        }

        mutating func append(_ text: String) {
            buffer.append(contentsOf: text.utf8)
            written += text.utf8.count
            flushIfFull()
        }

        mutating func flushIfFull() {
            if buffer.count >= 1 << 20, error == nil {
                do { try flush() } catch { self.error = error }
            }
        }

        mutating func flush() throws {
            if let error { throw error }
            try handle.write(contentsOf: buffer)
            buffer.removeAll(keepingCapacity: true)
        }

        /// `yyyy-MM-dd HH:mm:ss +0100`, as Apple writes local times.
        mutating func appendDate(_ secondsSince1970: Int) {
            let local = secondsSince1970 + 3600
            let days = local.floorDiv(86_400)
            let seconds = local - days * 86_400
            let date = CalendarDate(dayNumber: days)!
            let (year, month, day) = (date.year, date.month, date.day)
            let before = buffer.count
            func two(_ value: Int) {
                buffer.append(UInt8(ascii: "0") + UInt8(value / 10))
                buffer.append(UInt8(ascii: "0") + UInt8(value % 10))
            }
            two(year / 100)
            two(year % 100)
            buffer.append(UInt8(ascii: "-"))
            two(month)
            buffer.append(UInt8(ascii: "-"))
            two(day)
            buffer.append(UInt8(ascii: " "))
            two(seconds / 3600)
            buffer.append(UInt8(ascii: ":"))
            two(seconds / 60 % 60)
            buffer.append(UInt8(ascii: ":"))
            two(seconds % 60)
            buffer.append(contentsOf: " +0100".utf8)
            written += buffer.count - before
            flushIfFull()
        }

        /// A fixed-point number, without trailing zeros (as Apple writes them).
        mutating func appendNumber(_ value: Double, decimals: Int) {
            var scale = 1
            for _ in 0..<decimals { scale *= 10 }
            let scaled = Int((value * Double(scale)).rounded())
            var text = String(scaled / scale)
            var fraction = scaled % scale
            if fraction > 0 {
                var places = decimals
                while fraction % 10 == 0 {
                    fraction /= 10
                    places -= 1
                }
                let digits = String(fraction)
                text += "." + String(repeating: "0", count: places - digits.count) + digits
            }
            append(text)
        }
    }
}

extension Int {
    fileprivate func floorDiv(_ divisor: Int) -> Int {
        self >= 0 ? self / divisor : (self - divisor + 1) / divisor
    }
}
