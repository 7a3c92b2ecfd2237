import Foundation

/// The kinds of health data Data4Help holds, with the unit and the accepted range of one sample (API.md).
public enum SampleType: String, CaseIterable, Sendable, Codable {
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

    public var unit: String {
        switch self {
        case .heartRate: "beats/min"
        case .systolicPressure, .diastolicPressure: "mmHg"
        case .oxygenSaturation: "%"
        case .stepCount: "steps"
        case .distanceWalkingRunning: "m"
        case .activeEnergyBurned: "kcal"
        case .standingHours, .sleepingHours: "h"
        case .weight: "kg"
        case .height: "cm"
        }
    }

    public var range: ClosedRange<Double> {
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
        }
    }

    /// The compact code stored in `samples.type` and `daily_rollups.type` (never reorder: it is on disk).
    public var code: Int16 {
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
        }
    }

    public init?(code: Int16) {
        guard let type = Self.allCases.first(where: { $0.code == code }) else { return nil }
        self = type
    }
}

/// One measurement of one person.
public struct Sample: Sendable, Equatable {
    public var type: SampleType
    public var value: Double
    public var at: Date

    public init(type: SampleType, value: Double, at: Date) {
        self.type = type
        self.value = value
        self.at = at
    }
}
