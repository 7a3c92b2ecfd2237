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

#if canImport(CZlib)
    import CZlib
#endif

/// Apple Health fixtures shared by the parser, archive, import, import-job, sources, chart and rate-limit
/// suites: a small export with known samples and one invalid record, zip archives built (and forged)
/// here, and the import endpoint as a phone would call it.
enum AppleHealthFixtures {
    /// A small export in Apple's shape: internal DTD subset, ExportDate, Me, one record of every mapped type, records
    /// and correlations of other types, a workout, an activity summary, a comment and a CDATA section.
    static let export = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!-- HealthKit Export Version: 13 -->
        <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary)*)>
        <!ATTLIST HealthData
          locale CDATA #REQUIRED
        >
        <!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
        <!ATTLIST Record
          type          CDATA #REQUIRED
          unit          CDATA #IMPLIED
          note          CDATA "a literal with ]> and <!ENTITY in it is only text"
        >
        <?generator Health 17.1 ?>
        ]>
        <HealthData locale="en_GB">
         <ExportDate value="2024-03-02 09:00:00 +0100"/>
         <Me HKCharacteristicTypeIdentifierDateOfBirth="1985-04-12" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale"/>
         <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Jane&apos;s Watch" device="&lt;&lt;HKDevice: 0x2837a1e50&gt;, name:Apple Watch&gt;" unit="count/min" creationDate="2024-03-01 08:16:00 +0100" startDate="2024-03-01 08:15:00 +0100" endDate="2024-03-01 08:15:00 +0100" value="72">
          <MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="0"/>
         </Record>
         <Record type="HKQuantityTypeIdentifierStepCount" sourceName="iPhone" unit="count" creationDate="2024-03-01 09:10:00 +0100" startDate="2024-03-01 09:00:00 +0100" endDate="2024-03-01 09:10:00 +0100" value="1200"/>
         <Record type="HKQuantityTypeIdentifierOxygenSaturation" sourceName="Watch" unit="%" startDate="2024-03-01 03:00:00 +0100" endDate="2024-03-01 03:00:00 +0100" value="0.97"/>
         <Record type="HKQuantityTypeIdentifierBodyMass" sourceName="Withings" unit="lb" startDate="2024-03-01 07:00:00 +0100" endDate="2024-03-01 07:00:00 +0100" value="154.3"/>
         <Record type="HKQuantityTypeIdentifierHeight" sourceName="Health" unit="ft" startDate="2024-01-01 12:00:00 +0100" endDate="2024-01-01 12:00:00 +0100" value="5.5"/>
         <Record type='HKQuantityTypeIdentifierDistanceWalkingRunning' sourceName='iPhone' unit='mi' startDate='2024-03-01 09:00:00 -0500' endDate='2024-03-01 09:30:00 -0500' value='1.5'/>
         <Record type="HKQuantityTypeIdentifierActiveEnergyBurned" sourceName="Watch" unit="kJ" startDate="2024-03-01 12:00:00 +0100" endDate="2024-03-01 12:05:00 +0100" value="418.4"/>
         <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Watch" startDate="2024-02-29 23:30:00 +0100" endDate="2024-03-01 06:45:00 +0100" value="HKCategoryValueSleepAnalysisAsleepCore"/>
         <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Watch" startDate="2024-02-29 23:00:00 +0100" endDate="2024-03-01 07:00:00 +0100" value="HKCategoryValueSleepAnalysisInBed"/>
         <Record type="HKCategoryTypeIdentifierAppleStandHour" sourceName="Watch" startDate="2024-03-01 10:00:00 +0100" endDate="2024-03-01 11:00:00 +0100" value="HKCategoryValueAppleStandHourStood"/>
         <Record type="HKCategoryTypeIdentifierAppleStandHour" sourceName="Watch" startDate="2024-03-01 11:00:00 +0100" endDate="2024-03-01 12:00:00 +0100" value="HKCategoryValueAppleStandHourIdle"/>
         <Record type="HKQuantityTypeIdentifierBasalEnergyBurned" sourceName="Watch" unit="kcal" startDate="2024-03-01 12:00:00 +0100" endDate="2024-03-01 12:05:00 +0100" value="1.2"/>
         <Record type="HKQuantityTypeIdentifierBasalEnergyBurned" sourceName="Watch" unit="kcal" startDate="2024-03-01 12:05:00 +0100" endDate="2024-03-01 12:10:00 +0100" value="1.3"/>
         <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Odd app" unit="furlongs" startDate="2024-03-01 12:00:00 +0100" endDate="2024-03-01 12:00:00 +0100" value="1"/>
         <!-- a comment is not a <Record type="HKQuantityTypeIdentifierHeartRate" value="1"/> -- -->
         <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Omron" creationDate="2024-03-01 08:00:00 +0100" startDate="2024-03-01 08:00:00 +0100" endDate="2024-03-01 08:00:00 +0100">
          <MetadataEntry key="HKWasUserEntered" value="1"/>
          <Record type="HKQuantityTypeIdentifierBloodPressureDiastolic" sourceName="Omron" unit="mmHg" startDate="2024-03-01 08:00:00 +0100" endDate="2024-03-01 08:00:00 +0100" value="80"/>
          <Record type="HKQuantityTypeIdentifierBloodPressureSystolic" sourceName="Omron" unit="mmHg" startDate="2024-03-01 08:00:00 +0100" endDate="2024-03-01 08:00:00 +0100" value="120"/>
         </Correlation>
         <Correlation type="HKCorrelationTypeIdentifierFood" sourceName="MyFitnessPal" startDate="2024-03-01 13:00:00 +0100" endDate="2024-03-01 13:00:00 +0100">
          <Record type="HKQuantityTypeIdentifierDietaryEnergyConsumed" sourceName="MyFitnessPal" unit="kcal" startDate="2024-03-01 13:00:00 +0100" endDate="2024-03-01 13:00:00 +0100" value="650"/>
         </Correlation>
         <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30" durationUnit="min" sourceName="Watch" startDate="2024-03-01 18:00:00 +0100" endDate="2024-03-01 18:30:00 +0100">
          <MetadataEntry key="HKIndoorWorkout" value="0"/>
          <WorkoutRoute sourceName="Watch"><FileReference path="/workout-routes/route_2024-03-01_6.30pm.gpx"/></WorkoutRoute>
         </Workout>
         <ActivitySummary dateComponents="2024-03-01" activeEnergyBurned="400" activeEnergyBurnedUnit="Cal" appleStandHours="12"/>
         <![CDATA[ <Record type="HKQuantityTypeIdentifierHeartRate"/> ]]>
        </HealthData>

        """

    static func utc(_ text: String) -> Date {
        ISO8601DateFormatter().date(from: text)!
    }

    static let expectedSamples: [Sample] = [
        Sample(type: .heartRate, value: 72, at: utc("2024-03-01T07:15:00Z")),
        Sample(type: .stepCount, value: 1200, at: utc("2024-03-01T08:00:00Z")),
        Sample(type: .oxygenSaturation, value: 97, at: utc("2024-03-01T02:00:00Z")),
        Sample(type: .weight, value: 154.3 * 0.453_592_37, at: utc("2024-03-01T06:00:00Z")),
        Sample(type: .height, value: 167.64, at: utc("2024-01-01T11:00:00Z")),
        Sample(type: .distanceWalkingRunning, value: 2414.016, at: utc("2024-03-01T14:00:00Z")),
        Sample(type: .activeEnergyBurned, value: 100, at: utc("2024-03-01T11:00:00Z")),
        Sample(type: .sleepingHours, value: 7.25, at: utc("2024-02-29T22:30:00Z")),
        Sample(type: .standingHours, value: 1, at: utc("2024-03-01T09:00:00Z")),
        Sample(type: .diastolicPressure, value: 80, at: utc("2024-03-01T07:00:00Z")),
        Sample(type: .systolicPressure, value: 120, at: utc("2024-03-01T07:00:00Z")),
    ]

    /// The heart rate in furlongs: the one invalid record of `export`, on this line (counted here, not by the parser).
    static let expectedInvalid = [
        AppleHealthInvalidRecord(
            line: lineNumber(of: #"unit="furlongs""#, in: export), identifier: "HKQuantityTypeIdentifierHeartRate",
            reason: #"its unit "furlongs" is not one Data4Help converts"#)
    ]

    /// The 1-based line of the first line of `text` containing `needle`.
    static func lineNumber(of needle: String, in text: String) -> Int {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return lines.firstIndex { $0.contains(needle) }! + 1
    }

    static let exportXML = Array(export.utf8)

    static func post(_ harness: TestHarness, _ bytes: [UInt8], contentType: String, token: String?) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: contentType]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await harness.client.execute(
            uri: "/v1/me/imports/apple-health", method: .post, headers: headers, body: ByteBuffer(bytes: bytes))
    }

    static func storedSamples(_ harness: TestHarness) async throws -> Int {
        try await harness.sql("SELECT count(*) FROM samples").first?.decode(Int.self) ?? -1
    }

    /// One file to put in a test archive; the overrides forge headers the way an attacker would.
    struct Entry {
        var path: String
        var data: [UInt8]
        var deflated = true
        var declaredSize: UInt32?
        var flags: UInt16 = 0
        var crc: UInt32?
        /// Forces the compression method the headers declare (12 is bzip2, which the reader does not implement).
        var method: UInt16?
    }

    static func rawDeflate(_ data: [UInt8]) -> [UInt8] {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            deflateEnd(stream)
            stream.deallocate()
        }
        let status = deflateInit2_(
            stream, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK)
        var input = data
        var output = [UInt8](repeating: 0, count: Int(deflateBound(stream, UInt(data.count))))
        input.withUnsafeMutableBufferPointer { input in
            output.withUnsafeMutableBufferPointer { output in
                stream.pointee.next_in = input.baseAddress
                stream.pointee.avail_in = UInt32(input.count)
                stream.pointee.next_out = output.baseAddress
                stream.pointee.avail_out = UInt32(output.count)
                precondition(deflate(stream, Z_FINISH) == Z_STREAM_END)
            }
        }
        output.removeLast(Int(stream.pointee.avail_out))
        return output
    }

    static func crc(_ data: [UInt8]) -> UInt32 {
        UInt32(data.withUnsafeBufferPointer { crc32(0, $0.baseAddress, UInt32($0.count)) })
    }

    /// A ZIP archive as `zip` or the iPhone writes one: local headers and data, central directory, end record.
    static func zip(_ entries: [Entry]) -> [UInt8] {
        var archive: [UInt8] = []
        var directory: [UInt8] = []
        for entry in entries {
            let stored = entry.deflated ? rawDeflate(entry.data) : entry.data
            let name = Array(entry.path.utf8)
            let offset = UInt32(archive.count)
            func common(_ bytes: inout [UInt8]) {
                bytes.le16(20)
                bytes.le16(entry.flags)
                bytes.le16(entry.method ?? (entry.deflated ? 8 : 0))
                bytes.le16(0)  // time
                bytes.le16(0x21)  // 1980-01-01
                bytes.le32(entry.crc ?? crc(entry.data))
                bytes.le32(UInt32(stored.count))
                bytes.le32(entry.declaredSize ?? UInt32(entry.data.count))
                bytes.le16(UInt16(name.count))
                bytes.le16(0)  // extra
            }
            archive.le32(0x0403_4B50)
            common(&archive)
            archive += name + stored
            directory.le32(0x0201_4B50)
            directory.le16(0x031E)  // made by Unix
            common(&directory)
            directory.le16(0)  // comment
            directory.le16(0)  // disk
            directory.le16(0)  // internal attributes
            directory.le32(0)  // external attributes
            directory.le32(offset)
            directory += name
        }
        let directoryOffset = UInt32(archive.count)
        archive += directory
        archive.le32(0x0605_4B50)
        archive.le16(0)
        archive.le16(0)
        archive.le16(UInt16(entries.count))
        archive.le16(UInt16(entries.count))
        archive.le32(UInt32(directory.count))
        archive.le32(directoryOffset)
        archive.le16(0)
        return archive
    }
}

extension Array where Element == UInt8 {
    fileprivate mutating func le16(_ value: UInt16) {
        append(UInt8(value & 0xFF))
        append(UInt8(value >> 8))
    }

    fileprivate mutating func le32(_ value: UInt32) {
        le16(UInt16(value & 0xFFFF))
        le16(UInt16(value >> 16))
    }
}
