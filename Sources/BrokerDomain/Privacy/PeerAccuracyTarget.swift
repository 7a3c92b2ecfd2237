/// How close to the truth a peer percentile must be, 95 times in 100, to be shown (issue 32): a figure whose
/// 95 % margin is wider is not drawn and is null in the API. The targets are what a person comparing
/// themselves can use: a couple of beats per minute, five hundred steps, a quarter of an hour of sleep.
/// docs/privacy.md lists them; `d4h-dev bench peer-accuracy` measures them on `make run`'s population.
package enum PeerAccuracyTarget {
    /// The widest 95 % margin, in the type's unit, of a peer percentile that is shown.
    package static func of(_ type: SampleType) -> Double {
        switch type {
        case .heartRate: 2
        case .restingHeartRate: 2
        case .systolicPressure: 3
        case .diastolicPressure: 2
        case .oxygenSaturation: 0.5
        case .stepCount: 500
        case .distanceWalkingRunning: 400
        case .activeEnergyBurned: 40
        case .standingHours: 0.25
        case .sleepingHours: 0.25
        case .weight: 2
        case .height: 2
        case .bodyTemperature: 0.1
        case .respiratoryRate: 0.5
        case .heartRateVariability: 4
        case .bloodGlucose: 0.3
        case .vo2Max: 1.5
        }
    }
}
