/// The JSON body limit of the contract; import endpoints raise it for themselves.
package let jsonBodyLimit = 16 * 1024 * 1024
/// The import limit of the contract (an iPhone's export.zip).
package let importBodyLimit = 512 * 1024 * 1024
/// The body limit of a FHIR Bundle upload (`POST /v1/me/samples`, `application/fhir+json`): a hospital
/// portal writes an Observation in 1–3 KB (pretty-printed, with narrative and references), so 10,000 of them
/// do not fit the JSON limit.
package let fhirBundleBodyLimit = 32 * 1024 * 1024
