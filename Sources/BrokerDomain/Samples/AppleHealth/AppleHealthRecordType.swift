/// The HealthKit record types Data4Help imports, with how each maps onto a `SampleType`.
enum AppleHealthRecordType: Int, CaseIterable, Sendable {
    case heartRate, oxygenSaturation, stepCount, distanceWalkingRunning, activeEnergyBurned
    case bodyMass, height, systolicPressure, diastolicPressure, standHour, sleepAnalysis
    case bodyTemperature, respiratoryRate, restingHeartRate, heartRateVariability, bloodGlucose, vo2Max

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
        case .bodyTemperature: "HKQuantityTypeIdentifierBodyTemperature"
        case .respiratoryRate: "HKQuantityTypeIdentifierRespiratoryRate"
        case .restingHeartRate: "HKQuantityTypeIdentifierRestingHeartRate"
        case .heartRateVariability: "HKQuantityTypeIdentifierHeartRateVariabilitySDNN"
        case .bloodGlucose: "HKQuantityTypeIdentifierBloodGlucose"
        case .vo2Max: "HKQuantityTypeIdentifierVO2Max"
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
        case .bodyTemperature: .bodyTemperature
        case .respiratoryRate: .respiratoryRate
        case .restingHeartRate: .restingHeartRate
        case .heartRateVariability: .heartRateVariability
        case .bloodGlucose: .bloodGlucose
        case .vo2Max: .vo2Max
        }
    }

    /// One HealthKit unit and how a value in it becomes our unit (`SampleType.unit`): `value × factor + offset`.
    struct Conversion: Sendable {
        var unit: String
        var factor: Double
        /// Only temperatures need one (°F → °C).
        var offset: Double = 0
    }

    /// The units HealthKit writes for this type; empty for category types, which carry no unit.
    var conversions: [Conversion] {
        func scale(_ pairs: [(String, Double)]) -> [Conversion] { pairs.map { Conversion(unit: $0.0, factor: $0.1) } }
        switch self {
        case .heartRate, .restingHeartRate: return scale([("count/min", 1), ("count/s", 60)])
        case .oxygenSaturation: return scale([("%", 100)])  // HealthKit stores a fraction (0.97) under the unit "%"
        case .stepCount: return scale([("count", 1)])
        case .distanceWalkingRunning:
            return scale([("m", 1), ("km", 1000), ("mi", 1609.344), ("ft", 0.3048), ("yd", 0.9144), ("cm", 0.01)])
        case .activeEnergyBurned: return scale([("kcal", 1), ("Cal", 1), ("kJ", 1 / 4.184), ("cal", 0.001), ("J", 1 / 4184)])
        case .bodyMass: return scale([("kg", 1), ("lb", 0.453_592_37), ("g", 0.001), ("st", 6.350_293_18), ("oz", 0.028_349_523_125)])
        case .height: return scale([("cm", 1), ("m", 100), ("in", 2.54), ("ft", 30.48), ("mm", 0.1)])
        case .systolicPressure, .diastolicPressure: return scale([("mmHg", 1)])
        case .standHour, .sleepAnalysis: return []
        case .bodyTemperature: return [Conversion(unit: "degC", factor: 1), Conversion(unit: "degF", factor: 5.0 / 9, offset: -32 * 5.0 / 9)]
        case .respiratoryRate: return scale([("count/min", 1), ("count/s", 60)])
        case .heartRateVariability: return scale([("ms", 1), ("s", 1000)])
        case .bloodGlucose:
            // Apple writes mmol/L with glucose's molar mass in it; mg/dL ÷ 18.0156 (that mass ÷ 10) is mmol/L.
            return scale([("mg/dL", 1 / 18.0156), ("mmol<180.1558800000541>/L", 1), ("mmol/L", 1)])
        case .vo2Max: return scale([("mL/min·kg", 1), ("mL/(kg·min)", 1), ("ml/(kg*min)", 1)])
        }
    }

    static let bloodPressureCorrelation = "HKCorrelationTypeIdentifierBloodPressure"
    static let stood = "HKCategoryValueAppleStandHourStood"
    static let idle = "HKCategoryValueAppleStandHourIdle"
    /// Asleep, AsleepUnspecified, AsleepCore, AsleepDeep, AsleepREM; InBed and Awake are not sleep.
    static let asleepPrefix = "HKCategoryValueSleepAnalysisAsleep"
    static let inBed = "HKCategoryValueSleepAnalysisInBed"
    static let awake = "HKCategoryValueSleepAnalysisAwake"
}
