import Foundation

/// The words mails use for what a request asks: data types and purposes in plain words, in each language.
/// Mails name kinds of data, never a value of anyone's data.
enum MailWords {
    static func type(_ type: RequestedType, _ language: Language) -> String {
        switch type {
        case .position: language == .it ? "Posizione (traccia GPS)" : "Position (GPS track)"
        case .sample(let sample): Self.sample(sample, language)
        }
    }

    static func sample(_ type: SampleType, _ language: Language) -> String {
        switch (type, language) {
        case (.heartRate, .en): "Heart rate"
        case (.heartRate, .it): "Frequenza cardiaca"
        case (.systolicPressure, .en): "Blood pressure, systolic"
        case (.systolicPressure, .it): "Pressione sistolica"
        case (.diastolicPressure, .en): "Blood pressure, diastolic"
        case (.diastolicPressure, .it): "Pressione diastolica"
        case (.oxygenSaturation, .en): "Oxygen saturation"
        case (.oxygenSaturation, .it): "Saturazione di ossigeno"
        case (.stepCount, .en): "Steps"
        case (.stepCount, .it): "Passi"
        case (.distanceWalkingRunning, .en): "Distance walked or run"
        case (.distanceWalkingRunning, .it): "Distanza percorsa a piedi o di corsa"
        case (.activeEnergyBurned, .en): "Active energy burned"
        case (.activeEnergyBurned, .it): "Energia attiva consumata"
        case (.standingHours, .en): "Hours standing"
        case (.standingHours, .it): "Ore in piedi"
        case (.sleepingHours, .en): "Hours of sleep"
        case (.sleepingHours, .it): "Ore di sonno"
        case (.weight, .en): "Weight"
        case (.weight, .it): "Peso"
        case (.height, .en): "Height"
        case (.height, .it): "Altezza"
        case (.bodyTemperature, .en): "Body temperature"
        case (.bodyTemperature, .it): "Temperatura corporea"
        case (.respiratoryRate, .en): "Respiratory rate"
        case (.respiratoryRate, .it): "Frequenza respiratoria"
        case (.restingHeartRate, .en): "Resting heart rate"
        case (.restingHeartRate, .it): "Frequenza cardiaca a riposo"
        case (.heartRateVariability, .en): "Heart rate variability"
        case (.heartRateVariability, .it): "Variabilità della frequenza cardiaca"
        case (.bloodGlucose, .en): "Blood glucose"
        case (.bloodGlucose, .it): "Glicemia"
        case (.vo2Max, .en): "VO₂ max"
        case (.vo2Max, .it): "VO₂ max"
        }
    }

    static func types(_ types: [RequestedType], _ language: Language) -> String {
        types.map { "  • " + type($0, language) }.joined(separator: "\n")
    }

    static func purpose(_ purpose: PurposeOfUse, _ language: Language) -> String {
        guard language == .it else { return purpose.plainWords }
        return switch purpose {
        case .treatment: "Per curarti o assistere la tua salute"
        case .emergencyTreatment: "Per curarti in un'emergenza"
        case .clinicalTrialResearch: "Per una sperimentazione clinica"
        case .healthcareResearch: "Per la ricerca sanitaria"
        case .publicHealth: "Per la sanità pubblica (per esempio, seguire una malattia nella popolazione)"
        case .patientSafety: "Per la tua sicurezza (per esempio, vegliare su di te durante un evento)"
        case .healthcareOperations: "Per gestire o migliorare un servizio sanitario"
        case .healthcarePayment: "Per pagare o fatturare le tue cure (assicurazione)"
        case .healthcareMarketing: "Per il marketing: pubblicizzare o vendere prodotti o servizi sanitari"
        case .patientRequested: "Perché l'hai chiesto tu"
        }
    }
}
