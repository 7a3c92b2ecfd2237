import Foundation

/// How a value in one UCUM unit becomes a value in a sample type's own unit (`observationCoding.unitCode`):
/// `value × factor + offset`. The table below is every unit a FHIR import accepts, and deliberately small:
/// a unit not in it is reported, never guessed (`docs/fhir.md` lists it too).
package struct UCUMConversion: Sendable, Equatable {
    package var factor: Double
    package var offset: Double

    package static let identity = UCUMConversion(factor: 1, offset: 0)

    /// The converted value, rounded to 4 decimals when a conversion happened: `98.6 [degF]` is `37` °C, not
    /// `36.99999999999999` (no device here measures finer than a ten-thousandth of the table's unit).
    package func apply(_ value: Double) -> Double {
        guard self != .identity else { return value }
        return ((value * factor + offset) * 10_000).rounded() / 10_000
    }

    /// The conversion of `code` (a UCUM code, case-sensitive as UCUM is) into `type`'s unit, or nil when
    /// the import does not accept that unit for that type.
    package static func into(_ type: SampleType, from code: String) -> UCUMConversion? {
        table[type]?[code]
    }

    private static func scale(_ factor: Double) -> UCUMConversion { UCUMConversion(factor: factor, offset: 0) }

    /// Per type: the accepted UCUM codes. The table's own unit is always there (identity); the others are the
    /// units exporters are seen to write (Apple writes `count/min`, US portals `[lb_av]`, `[in_i]`, `[degF]`, `mg/dL`).
    fileprivate static let table: [SampleType: [String: UCUMConversion]] = {
        let perMinute: [String: UCUMConversion] = ["/min": .identity, "{beats}/min": .identity, "{beat}/min": .identity, "count/min": .identity]
        var table: [SampleType: [String: UCUMConversion]] = [
            .heartRate: perMinute,
            .restingHeartRate: perMinute,
            .respiratoryRate: ["/min": .identity, "{breaths}/min": .identity, "{breath}/min": .identity, "count/min": .identity],
            .systolicPressure: ["mm[Hg]": .identity],
            .diastolicPressure: ["mm[Hg]": .identity],
            // A fraction (UCUM's unity "1", as HealthKit keeps it): 0.97 is 97 %.
            .oxygenSaturation: ["%": .identity, "1": scale(100)],
            .bodyTemperature: ["Cel": .identity, "[degF]": UCUMConversion(factor: 5.0 / 9.0, offset: -32.0 * 5.0 / 9.0)],
            .weight: ["kg": .identity, "g": scale(0.001), "[lb_av]": scale(0.453_592_37)],
            .height: ["cm": .identity, "m": scale(100), "mm": scale(0.1), "[in_i]": scale(2.54), "[ft_i]": scale(30.48)],
            .heartRateVariability: ["ms": .identity, "s": scale(1000)],
            // Glucose only: its molar mass, 180.156 g/mol, makes 18.0156 mg/dL one mmol/L.
            .bloodGlucose: ["mmol/L": .identity, "mg/dL": scale(1 / 18.0156)],
            .vo2Max: ["mL/(kg.min)": .identity, "mL/kg/min": .identity, "mL/min/kg": .identity],
            .stepCount: ["{steps}": .identity, "{step}": .identity, "{count}": .identity, "1": .identity],
            .distanceWalkingRunning: ["m": .identity, "km": scale(1000), "cm": scale(0.01), "[mi_i]": scale(1609.344)],
            // `[Cal]` is the nutrition Calorie, a kilocalorie.
            .activeEnergyBurned: ["kcal": .identity, "[Cal]": .identity, "kJ": scale(1 / 4.184)],
            .standingHours: ["h": .identity, "min": scale(1.0 / 60)],
            .sleepingHours: ["h": .identity, "min": scale(1.0 / 60), "s": scale(1.0 / 3600)],
        ]
        // The table's own unit is accepted whatever the list above says.
        for type in SampleType.allCases { table[type, default: [:]][type.observationCoding.unitCode] = .identity }
        return table
    }()
}

extension UCUMConversion {
    /// The UCUM codes accepted for `type`, its own unit first: what a problem lists.
    package static func accepted(for type: SampleType) -> [String] {
        let own = type.observationCoding.unitCode
        return [own] + (table[type] ?? [:]).keys.filter { $0 != own }.sorted()
    }
}
