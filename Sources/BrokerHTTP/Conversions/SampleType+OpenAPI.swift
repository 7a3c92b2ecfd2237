import BrokerDomain
import BrokerOpenAPI

// The contract's sample types and the domain's, case by case: a type added to either side is a compile
// error here, not a silent heart rate at run time.

extension Components.Schemas.SampleType {
    init(_ type: SampleType) {
        switch type {
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

extension SampleType {
    init(_ type: Components.Schemas.SampleType) {
        switch type {
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
