import Foundation

/// The kinds of health data Data4Help holds: the unit, the accepted range of one sample, and how a day of
/// samples becomes one figure (`aggregation`). `docs/sample-types.md` is this table in words.
package enum SampleType: String, CaseIterable, Sendable, Codable {
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

    package var unit: String {
        switch self {
        case .heartRate, .restingHeartRate: "beats/min"
        case .systolicPressure, .diastolicPressure: "mmHg"
        case .oxygenSaturation: "%"
        case .stepCount: "steps"
        case .distanceWalkingRunning: "m"
        case .activeEnergyBurned: "kcal"
        case .standingHours, .sleepingHours: "h"
        case .weight: "kg"
        case .height: "cm"
        case .bodyTemperature: "°C"
        case .respiratoryRate: "breaths/min"
        case .heartRateVariability: "ms"
        case .bloodGlucose: "mmol/L"
        case .vo2Max: "mL/(kg·min)"
        }
    }

    /// What one sample may hold. For cumulative types the bound is per record (a phone writes many a day).
    package var range: ClosedRange<Double> {
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
        // Below 30 °C or above 45 °C no one is measuring a living person's temperature.
        case .bodyTemperature: 30...45
        case .respiratoryRate: 4...70
        case .restingHeartRate: 20...200
        // SDNN as Apple Watch reports it: a few ms (heart failure) to a few hundred (athletes at rest).
        case .heartRateVariability: 1...500
        // 1 mmol/L (18 mg/dL) is the lowest a meter reads; 50 mmol/L (900 mg/dL) beyond any survivable level.
        case .bloodGlucose: 1...50
        case .vo2Max: 5...100
        }
    }

    /// How the samples of one person's local day combine into that day's figure.
    package var aggregation: SampleAggregation {
        switch self {
        case .stepCount, .distanceWalkingRunning, .activeEnergyBurned, .standingHours, .sleepingHours: .dailyTotal
        case .heartRate, .systolicPressure, .diastolicPressure, .oxygenSaturation, .weight, .height, .bodyTemperature,
            .respiratoryRate, .restingHeartRate, .heartRateVariability, .bloodGlucose, .vo2Max:
            .mean
        }
    }

    /// The compact code stored in `samples.type` and `daily_rollups.type` (never reorder: it is on disk).
    package var code: Int16 {
        switch self {
        case .heartRate: 1
        case .systolicPressure: 2
        case .diastolicPressure: 3
        case .oxygenSaturation: 4
        case .stepCount: 5
        case .distanceWalkingRunning: 6
        case .activeEnergyBurned: 7
        case .standingHours: 8
        case .sleepingHours: 9
        case .weight: 10
        case .height: 11
        case .bodyTemperature: 12
        case .respiratoryRate: 13
        case .restingHeartRate: 14
        case .heartRateVariability: 15
        case .bloodGlucose: 16
        case .vo2Max: 17
        }
    }

    package init?(code: Int16) {
        guard let type = Self.allCases.first(where: { $0.code == code }) else { return nil }
        self = type
    }

    /// The codes of the cumulative types, for SQL that picks a day's figure (`sum` or `sum / count`).
    package static let dailyTotalCodes: [Int16] = allCases.filter { $0.aggregation == .dailyTotal }.map(\.code)
}
