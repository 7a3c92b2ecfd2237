/// The HealthKit record types Data4Help imports, with how each maps onto a `SampleType`.
enum AppleHealthRecordType: Int, CaseIterable, Sendable {
    case heartRate, oxygenSaturation, stepCount, distanceWalkingRunning, activeEnergyBurned
    case bodyMass, height, systolicPressure, diastolicPressure, standHour, sleepAnalysis

    /// The `type` attribute of the `<Record>`.
    var identifier: String {
        switch self {
        case .heartRate: "HKQuantityTypeIdentifierHeartRate"
        case .oxygenSaturation: "HKQuantityTypeIdentifierOxygenSaturation"
        case .stepCount: "HKQuantityTypeIdentifierStepCount"
        case .distanceWalkingRunning: "HKQuantityTypeIdentifierDistanceWalkingRunning"
        case .activeEnergyBurned: "HKQuantityTypeIdentifierActiveEnergyBurned"
        case .bodyMass: "HKQuantityTypeIdentifierBodyMass"
        case .height: "HKQuantityTypeIdentifierHeight"
        case .systolicPressure: "HKQuantityTypeIdentifierBloodPressureSystolic"
        case .diastolicPressure: "HKQuantityTypeIdentifierBloodPressureDiastolic"
        case .standHour: "HKCategoryTypeIdentifierAppleStandHour"
        case .sleepAnalysis: "HKCategoryTypeIdentifierSleepAnalysis"
        }
    }

    var sampleType: SampleType {
        switch self {
        case .heartRate: .heartRate
        case .oxygenSaturation: .oxygenSaturation
        case .stepCount: .stepCount
        case .distanceWalkingRunning: .distanceWalkingRunning
        case .activeEnergyBurned: .activeEnergyBurned
        case .bodyMass: .weight
        case .height: .height
        case .systolicPressure: .systolicPressure
        case .diastolicPressure: .diastolicPressure
        case .standHour: .standingHours
        case .sleepAnalysis: .sleepingHours
        }
    }

    /// HealthKit unit string → factor to our unit (`SampleType.unit`); empty for category types, which carry no unit.
    var unitFactors: [(unit: String, factor: Double)] {
        switch self {
        case .heartRate: [("count/min", 1), ("count/s", 60)]
        case .oxygenSaturation: [("%", 100)]  // HealthKit stores a fraction (0.97) under the unit "%"
        case .stepCount: [("count", 1)]
        case .distanceWalkingRunning:
            [("m", 1), ("km", 1000), ("mi", 1609.344), ("ft", 0.3048), ("yd", 0.9144), ("cm", 0.01)]
        case .activeEnergyBurned: [("kcal", 1), ("Cal", 1), ("kJ", 1 / 4.184), ("cal", 0.001), ("J", 1 / 4184)]
        case .bodyMass: [("kg", 1), ("lb", 0.453_592_37), ("g", 0.001), ("st", 6.350_293_18), ("oz", 0.028_349_523_125)]
        case .height: [("cm", 1), ("m", 100), ("in", 2.54), ("ft", 30.48), ("mm", 0.1)]
        case .systolicPressure, .diastolicPressure: [("mmHg", 1)]
        case .standHour, .sleepAnalysis: []
        }
    }

    static let bloodPressureCorrelation = "HKCorrelationTypeIdentifierBloodPressure"
    static let stood = "HKCategoryValueAppleStandHourStood"
    /// Asleep, AsleepUnspecified, AsleepCore, AsleepDeep, AsleepREM; InBed and Awake are not sleep.
    static let asleepPrefix = "HKCategoryValueSleepAnalysisAsleep"
}

/// The record types and their units as bytes, so that matching a `<Record>` never builds a String.
struct AppleHealthRecordTable: Sendable {
    private struct Entry: Sendable {
        var type: AppleHealthRecordType
        var identifier: [UInt8]
        var units: [(unit: [UInt8], factor: Double)]
    }

    private let entries: [Entry]
    let bloodPressureCorrelation = Array(AppleHealthRecordType.bloodPressureCorrelation.utf8)
    let stood = Array(AppleHealthRecordType.stood.utf8)
    let asleepPrefix = Array(AppleHealthRecordType.asleepPrefix.utf8)

    init() {
        entries = AppleHealthRecordType.allCases.map { type in
            Entry(type: type, identifier: Array(type.identifier.utf8), units: type.unitFactors.map { (Array($0.unit.utf8), $0.factor) })
        }
    }

    func type(_ identifier: UnsafeBufferPointer<UInt8>) -> AppleHealthRecordType? {
        entries.first { AppleHealthBytes.equal($0.identifier, identifier) }?.type
    }

    func factor(_ type: AppleHealthRecordType, unit: UnsafeBufferPointer<UInt8>) -> Double? {
        entries[type.rawValue].units.first { AppleHealthBytes.equal($0.unit, unit) }?.factor
    }
}
