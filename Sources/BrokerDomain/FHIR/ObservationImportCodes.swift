/// The codes a FHIR import reads besides the mapping table's own (`SampleType(observationCodes:)`): the
/// blood pressure panels whose components are the readings, and the glucose codes that name the same
/// measurement as a mass concentration. Written here, explicitly, so that nothing else is read by guess.
package enum ObservationImportCodes {
    /// Panels of systolic and diastolic components: 85354-9 (what Data4Help writes, the R4 vital-signs
    /// profile's), 55284-4 ("Blood pressure systolic and diastolic") and 35094-2 ("Blood pressure panel"),
    /// which older exports use.
    package static let bloodPressurePanels: Set<String> = [
        key(ObservationCoding.bloodPressurePanel.system, ObservationCoding.bloodPressurePanel.code),
        key(FHIRSystems.loinc, "55284-4"),
        key(FHIRSystems.loinc, "35094-2"),
    ]

    /// Codes read as another code of the table. Laboratories and glucometers report glucose as a mass
    /// concentration (mg/dL) under their own LOINC codes; the value is converted into mmol/L by its unit.
    package static let synonyms: [String: (system: String, code: String)] = [
        key(FHIRSystems.loinc, "2339-0"): (FHIRSystems.loinc, "15074-8"),  // Glucose [Mass/volume] in Blood
        key(FHIRSystems.loinc, "41653-7"): (FHIRSystems.loinc, "15074-8"),  // … in Capillary blood by Glucometer
        key(FHIRSystems.loinc, "14743-9"): (FHIRSystems.loinc, "15074-8"),  // Glucose [Moles/volume] in Capillary blood by Glucometer
    ]

    package static func key(_ system: String, _ code: String) -> String { system + "|" + code }
}
