/// The URIs Data4Help's FHIR resources name codes and identifiers with. LOINC and UCUM are the standard
/// ones; the `data4help.example` ones are Data4Help's own, for what has no standard code (a sample type
/// LOINC has no code for) or is Data4Help's to name (a request, a grant, a pseudonym).
package enum FHIRSystems {
    package static let loinc = "http://loinc.org"
    package static let ucum = "http://unitsofmeasure.org"
    package static let observationCategory = "http://terminology.hl7.org/CodeSystem/observation-category"
    /// Data4Help's own sample types, coded by their API names (`heart_rate`, `standing_hours` …).
    package static let sampleType = "https://data4help.example/fhir/CodeSystem/sample-type"
    package static let request = "https://data4help.example/fhir/NamingSystem/single-request"
    package static let grant = "https://data4help.example/fhir/NamingSystem/grant"
    package static let vatNumber = "https://data4help.example/fhir/NamingSystem/vat-number"
    /// A person's own account, in their own export (never in anything a company or an auditor receives).
    package static let account = "https://data4help.example/fhir/NamingSystem/account"
    /// Per-request pseudonyms (`ConsentPseudonyms`): the request's id completes the system, so two requests'
    /// (and two companies') values never compare.
    package static let requestPseudonymPrefix = "https://data4help.example/fhir/NamingSystem/request-pseudonym/"
}
