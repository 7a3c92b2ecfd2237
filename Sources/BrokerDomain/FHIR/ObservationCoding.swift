/// How one sample type is written as a FHIR R4 `Observation`: its code, its UCUM unit, its category and
/// whether it is a reading at an instant or a quantity over a period. `docs/fhir.md` is this table in
/// words; the download encoder (`FHIRObservationEncoder`) and the Bundle import read it both ways, so what
/// Data4Help writes is what it reads back.
///
/// A type LOINC has no code for (stand hours, Apple's VO₂ max estimate) is coded in Data4Help's own system
/// (`FHIRSystems.sampleType`), never with a LOINC code that means something else.
package struct ObservationCoding: Sendable, Equatable {
    package enum Category: String, Sendable {
        case vitalSigns = "vital-signs"
        case activity
        case laboratory

        package var display: String {
            switch self {
            case .vitalSigns: "Vital Signs"
            case .activity: "Activity"
            case .laboratory: "Laboratory"
            }
        }
    }

    /// A reading of a state at one moment (`effectiveDateTime`), or a quantity accumulated over a period
    /// (`effectivePeriod`).
    package enum Effective: Sendable {
        case instant
        case period
    }

    package struct Code: Sendable, Equatable {
        package var system: String
        package var code: String
        package var display: String
    }

    /// The code the Observation is identified by (LOINC when LOINC has one).
    package var code: Code
    /// Codes written after the first, that say the same more generally (pulse oximetry is also "oxygen
    /// saturation in arterial blood", as the R4 oxygen saturation profile asks; resting heart rate is also a
    /// heart rate). An import reads them only when no first code is present.
    package var alsoCodes: [Code]
    /// UCUM code and the unit as people write it.
    package var unitCode: String
    package var unitDisplay: String
    package var category: Category
    package var effective: Effective
    /// The R4 vital-signs profile the Observation conforms to (`meta.profile`), when there is one.
    package var profile: String?

    package var hasLOINCCode: Bool { code.system == FHIRSystems.loinc }
}

extension ObservationCoding {
    /// The blood pressure panel: systolic and diastolic taken at the same instant, as components.
    package static let bloodPressurePanel = Code(
        system: FHIRSystems.loinc, code: "85354-9", display: "Blood pressure panel with all children optional")
    package static let bloodPressureProfile = "http://hl7.org/fhir/StructureDefinition/bp"
}

extension SampleType {
    /// This type's row of the FHIR mapping table.
    package var observationCoding: ObservationCoding { Self.observationCodings[Int(code)]! }

    /// Indexed by `code`, computed once: the encoder reads it for every sample.
    private static let observationCodings: [ObservationCoding?] = {
        var table = [ObservationCoding?](repeating: nil, count: Int(allCases.map(\.code).max()!) + 1)
        for type in allCases { table[Int(type.code)] = type.makeObservationCoding() }
        return table
    }()

    private func makeObservationCoding() -> ObservationCoding {
        typealias C = ObservationCoding
        func loinc(_ code: String, _ display: String) -> C.Code { C.Code(system: FHIRSystems.loinc, code: code, display: display) }
        func own(_ display: String) -> C.Code { C.Code(system: FHIRSystems.sampleType, code: rawValue, display: display) }
        func profile(_ name: String) -> String { "http://hl7.org/fhir/StructureDefinition/\(name)" }
        switch self {
        case .heartRate:
            return C(
                code: loinc("8867-4", "Heart rate"), alsoCodes: [], unitCode: "/min", unitDisplay: "beats/minute", category: .vitalSigns,
                effective: .instant, profile: profile("heartrate"))
        case .restingHeartRate:
            return C(
                code: loinc("40443-4", "Heart rate --resting"), alsoCodes: [loinc("8867-4", "Heart rate")], unitCode: "/min",
                unitDisplay: "beats/minute", category: .vitalSigns, effective: .instant, profile: profile("heartrate"))
        case .systolicPressure:
            return C(
                code: loinc("8480-6", "Systolic blood pressure"), alsoCodes: [], unitCode: "mm[Hg]", unitDisplay: "mmHg",
                category: .vitalSigns, effective: .instant, profile: nil)
        case .diastolicPressure:
            return C(
                code: loinc("8462-4", "Diastolic blood pressure"), alsoCodes: [], unitCode: "mm[Hg]", unitDisplay: "mmHg",
                category: .vitalSigns, effective: .instant, profile: nil)
        case .oxygenSaturation:
            return C(
                code: loinc("59408-5", "Oxygen saturation in Arterial blood by Pulse oximetry"),
                alsoCodes: [loinc("2708-6", "Oxygen saturation in Arterial blood")], unitCode: "%", unitDisplay: "%",
                category: .vitalSigns, effective: .instant, profile: profile("oxygensat"))
        case .respiratoryRate:
            return C(
                code: loinc("9279-1", "Respiratory rate"), alsoCodes: [], unitCode: "/min", unitDisplay: "breaths/minute",
                category: .vitalSigns, effective: .instant, profile: profile("resprate"))
        case .bodyTemperature:
            return C(
                code: loinc("8310-5", "Body temperature"), alsoCodes: [], unitCode: "Cel", unitDisplay: "°C", category: .vitalSigns,
                effective: .instant, profile: profile("bodytemp"))
        case .weight:
            return C(
                code: loinc("29463-7", "Body weight"), alsoCodes: [], unitCode: "kg", unitDisplay: "kg", category: .vitalSigns,
                effective: .instant, profile: profile("bodyweight"))
        case .height:
            return C(
                code: loinc("8302-2", "Body height"), alsoCodes: [], unitCode: "cm", unitDisplay: "cm", category: .vitalSigns,
                effective: .instant, profile: profile("bodyheight"))
        case .heartRateVariability:
            return C(
                code: loinc("80404-7", "R-R interval.standard deviation (Heart rate variability)"), alsoCodes: [], unitCode: "ms",
                unitDisplay: "ms", category: .vitalSigns, effective: .instant, profile: nil)
        case .bloodGlucose:
            return C(
                code: loinc("15074-8", "Glucose [Moles/volume] in Blood"), alsoCodes: [], unitCode: "mmol/L", unitDisplay: "mmol/L",
                category: .laboratory, effective: .instant, profile: nil)
        case .vo2Max:
            // LOINC's VO2 codes are measured at a laboratory's exercise test (94122-9 is "peak during
            // exercise"); a watch's estimate is not that, so it keeps Data4Help's own code.
            return C(
                code: own("VO2 max (estimated by the device)"), alsoCodes: [], unitCode: "mL/(kg.min)", unitDisplay: "mL/(kg·min)",
                category: .activity, effective: .instant, profile: nil)
        case .stepCount:
            return C(
                code: loinc("55423-8", "Number of steps in unspecified time Pedometer"), alsoCodes: [], unitCode: "{steps}",
                unitDisplay: "steps", category: .activity, effective: .period, profile: nil)
        case .distanceWalkingRunning:
            return C(
                code: loinc("55430-3", "Walking distance in unspecified time Pedometer"), alsoCodes: [], unitCode: "m",
                unitDisplay: "m", category: .activity, effective: .period, profile: nil)
        case .activeEnergyBurned:
            return C(
                code: loinc("41981-2", "Calories burned"), alsoCodes: [], unitCode: "kcal", unitDisplay: "kcal", category: .activity,
                effective: .period, profile: nil)
        case .standingHours:
            // No LOINC code counts the hours a person stood (Apple's "stand hours").
            return C(
                code: own("Stand hours"), alsoCodes: [], unitCode: "h", unitDisplay: "h", category: .activity, effective: .period,
                profile: nil)
        case .sleepingHours:
            return C(
                code: loinc("93832-4", "Sleep duration"), alsoCodes: [], unitCode: "h", unitDisplay: "h", category: .activity,
                effective: .period, profile: nil)
        }
    }

    /// The type an Observation's codes name, or nil when none of them is in the table or they name two
    /// types. A more specific code wins over the general one written beside it (a resting heart rate coded
    /// 40443-4 and 8867-4, in either order, is a resting heart rate), and Data4Help's own code of any type
    /// is read too.
    package init?(observationCodes codes: [(system: String, code: String)]) {
        let keys = codes.map { $0.system + "|" + $0.code }
        var named = Set(keys.compactMap { Self.byFirstCode[$0] })
        // Drop a type whose code another named type lists as its general "also" code.
        let general = Set(named.flatMap { type in type.observationCoding.alsoCodes.compactMap { Self.byFirstCode[$0.system + "|" + $0.code] } })
        named.subtract(general)
        if named.isEmpty { named = Set(keys.compactMap { Self.byAlsoCode[$0] }) }
        guard named.count == 1, let type = named.first else { return nil }
        self = type
    }

    private static let byFirstCode: [String: SampleType] = {
        var table: [String: SampleType] = [:]
        for type in allCases {
            table[type.observationCoding.code.system + "|" + type.observationCoding.code.code] = type
            table[FHIRSystems.sampleType + "|" + type.rawValue] = type
        }
        return table
    }()

    private static let byAlsoCode: [String: SampleType] = {
        var table: [String: SampleType] = [:]
        for type in allCases {
            for also in type.observationCoding.alsoCodes where byFirstCode[also.system + "|" + also.code] == nil {
                table[also.system + "|" + also.code] = type
            }
        }
        return table
    }()
}
