import BrokerDomain
import BrokerOpenAPI

extension Components.Schemas.RequestedType {
    /// Exhaustive, so a requested kind added to the domain is a compile error here rather than a silent heart rate.
    init(_ type: RequestedType) {
        switch type {
        case .position: self = .position
        case .sample(let sample):
            switch Components.Schemas.SampleType(sample) {
            case .heartRate: self = .heartRate
            case .systolicPressure: self = .systolicPressure
            case .diastolicPressure: self = .diastolicPressure
            case .oxygenSaturation: self = .oxygenSaturation
            case .stepCount: self = .stepCount
            case .distanceWalkingRunning: self = .distanceWalkingRunning
            case .activeEnergyBurned: self = .activeEnergyBurned
            case .standingHours: self = .standingHours
            case .sleepingHours: self = .sleepingHours
            case .weight: self = .weight
            case .height: self = .height
            case .bodyTemperature: self = .bodyTemperature
            case .respiratoryRate: self = .respiratoryRate
            case .restingHeartRate: self = .restingHeartRate
            case .heartRateVariability: self = .heartRateVariability
            case .bloodGlucose: self = .bloodGlucose
            case .vo2Max: self = .vo2Max
            }
        }
    }
}
