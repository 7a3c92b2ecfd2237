import Foundation

/// Reads a FHIR R4 `Bundle` a person uploads (a hospital portal's or a phone app's export) into samples,
/// through the same mapping table the downloads are written with (`SampleType(observationCodes:)`).
///
/// The Bundle arrives as a parsed JSON tree (objects as `[String: (any Sendable)?]`, arrays as
/// `[(any Sendable)?]`, numbers as `Int` or `Double`), so that the API's own JSON parse is the only one.
/// Only Observations are read; every other resource is counted as skipped by its type. An entry that cannot
/// be read (a code not in the table, a unit the import does not accept, a missing time) is a problem naming
/// the entry, never a guess; `docs/fhir.md` says what is read and how.
package enum FHIRBundleImport {
    package typealias JSONObject = [String: (any Sendable)?]

    /// The Bundle types that are lists of resources. `document`, `message` and `history` mean something
    /// else (a signed composition, a message, versions of one resource) and are refused.
    package static let bundleTypes = ["collection", "transaction", "batch", "searchset"]

    /// The Bundle's contents, or a 422's problems when the body is not a Bundle of a readable type.
    package static func read(_ bundle: JSONObject) -> Result<FHIRBundleContents, SampleError> {
        func refuse(_ field: String, _ message: String) -> Result<FHIRBundleContents, SampleError> {
            .failure(.invalid([FieldError(field: field, message: message)]))
        }
        guard let resourceType = bundle["resourceType"] as? String else {
            return refuse("resourceType", "is required: the body must be a FHIR Bundle (\"resourceType\": \"Bundle\")")
        }
        guard resourceType == "Bundle" else {
            return refuse(
                "resourceType",
                "must be Bundle, not \(shortened(resourceType)): put the Observations in a Bundle of type collection to import them")
        }
        guard let type = bundle["type"] as? String, bundleTypes.contains(type) else {
            return refuse("type", "must be one of \(bundleTypes.joined(separator: ", "))")
        }
        var contents = FHIRBundleContents()
        guard let entries = (bundle["entry"] ?? nil) as? [(any Sendable)?] else {
            if bundle["entry"] == nil { return .success(contents) }
            return refuse("entry", "must be an array")
        }
        for (index, item) in entries.enumerated() {
            let place = "entry[\(index)]"
            guard let entry = item as? JSONObject else {
                contents.problems.append(FieldError(field: place, message: "must be an object"))
                continue
            }
            guard let resource = (entry["resource"] ?? nil) as? JSONObject else {
                contents.problems.append(
                    FieldError(field: "\(place).resource", message: "is required (an entry without a resource, such as a delete, is not imported)"))
                continue
            }
            guard let resourceType = resource["resourceType"] as? String, isResourceTypeName(resourceType) else {
                contents.problems.append(FieldError(field: "\(place).resource.resourceType", message: "must be a FHIR resource type"))
                continue
            }
            guard resourceType == "Observation" else {
                contents.skip(resourceType)
                continue
            }
            ObservationReading(resource: resource, index: index).read(into: &contents)
        }
        return .success(contents)
    }

    /// A resource type as FHIR spells them (`Observation`, `MedicationRequest`): the names are echoed back
    /// as the keys of what was skipped, so nothing else is.
    private static func isResourceTypeName(_ name: String) -> Bool {
        guard let first = name.utf8.first, (65...90).contains(first), name.utf8.count <= 64 else { return false }
        return name.utf8.allSatisfy { (65...90).contains($0) || (97...122).contains($0) }
    }

    /// Text of the body echoed in a problem, at most 40 characters of it.
    static func shortened(_ text: String) -> String {
        text.count <= 40 ? "'\(text)'" : "'\(text.prefix(40))…'"
    }
}
