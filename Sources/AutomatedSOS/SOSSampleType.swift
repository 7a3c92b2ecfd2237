import Foundation

/// The kinds of health data the device records; the raw values are the server's sample type names (openapi.yaml, `SampleType`).
///
/// The list mirrors the server's `SampleType` instead of importing it, because this module must never
/// depend on server code; a trace or an upload uses the same names on both sides.
public enum SOSSampleType: String, CaseIterable, Sendable, Codable {
    case heartRate = "heart_rate"
    case systolicPressure = "systolic_pressure"
    case diastolicPressure = "diastolic_pressure"
    case oxygenSaturation = "oxygen_saturation"
    case stepCount = "step_count"
    case distanceWalkingRunning = "distance_walking_running"
    case activeEnergyBurned = "active_energy_burned"
    case standingHours = "standing_hours"
    case sleepingHours = "sleeping_hours"
    case weight
    case height
    case bodyTemperature = "body_temperature"
    case respiratoryRate = "respiratory_rate"
    case restingHeartRate = "resting_heart_rate"
    case heartRateVariability = "heart_rate_variability"
    case bloodGlucose = "blood_glucose"
    case vo2Max = "vo2_max"

    /// A dense index, so the monitor keeps its per-type state in fixed-size arrays instead of dictionaries.
    var index: Int {
        switch self {
        case .heartRate: 0
        case .systolicPressure: 1
        case .diastolicPressure: 2
        case .oxygenSaturation: 3
        case .stepCount: 4
        case .distanceWalkingRunning: 5
        case .activeEnergyBurned: 6
        case .standingHours: 7
        case .sleepingHours: 8
        case .weight: 9
        case .height: 10
        case .bodyTemperature: 11
        case .respiratoryRate: 12
        case .restingHeartRate: 13
        case .heartRateVariability: 14
        case .bloodGlucose: 15
        case .vo2Max: 16
        }
    }

    static let count = 17

    /// The values a working sensor can report (the server's accepted ranges). A reading outside them is a
    /// sensor fault, not a patient in danger, so the monitor ignores it rather than counting it as a breach.
    public var plausibleRange: ClosedRange<Double> {
        switch self {
        case .heartRate: 20...300
        case .systolicPressure: 40...300
        case .diastolicPressure: 20...200
        case .oxygenSaturation: 50...100
        case .stepCount: 0...100_000
        case .distanceWalkingRunning: 0...200_000
        case .activeEnergyBurned: 0...20_000
        case .standingHours, .sleepingHours: 0...24
        case .weight: 1...500
        case .height: 30...280
        // °C: below 30 or above 45 no one is measuring a living person's temperature.
        case .bodyTemperature: 30...45
        // breaths/min
        case .respiratoryRate: 4...70
        // beats/min
        case .restingHeartRate: 20...200
        // ms SDNN, as watches report it
        case .heartRateVariability: 1...500
        // mmol/L: the lowest a meter reads to beyond any survivable level
        case .bloodGlucose: 1...50
        // mL/(kg·min)
        case .vo2Max: 5...100
        }
    }
}
