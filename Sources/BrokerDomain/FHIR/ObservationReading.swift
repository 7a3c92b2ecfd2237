import Foundation

/// One Observation of an imported Bundle, read into samples: its codes name the type (a blood pressure
/// panel's components name theirs), its `effective[x]` the time, its `valueQuantity` the value in a unit
/// `UCUMConversion` accepts. What cannot be read is a problem naming the field; what is not a measurement
/// (a status of entered-in-error, cancelled or registered, a `dataAbsentReason`, a grouping panel's
/// `hasMember` without a value) is skipped with the reason.
/// The `subject` is not read: an upload is always the caller's own data.
struct ObservationReading {
    typealias JSONObject = FHIRBundleImport.JSONObject

    let resource: JSONObject
    let index: Int

    /// Statuses that say there is no measurement to keep: withdrawn, never made, or not made yet.
    static let skippedStatuses: Set<String> = ["entered-in-error", "cancelled", "registered"]

    private var place: String { "entry[\(index)].resource" }

    func read(into contents: inout FHIRBundleContents) {
        if let status = resource["status"] as? String, Self.skippedStatuses.contains(status) {
            return skip("status is \(status)", into: &contents)
        }
        if let absent = Self.dataAbsentReason(resource) {
            return skip("no value (dataAbsentReason \(absent))", into: &contents)
        }
        // A grouping panel (the vital signs panel 85353-1 as portals write it): no value of its own, its
        // members are Observations of the Bundle, read as theirs.
        if (resource["hasMember"] ?? nil) != nil, (resource["component"] ?? nil) == nil, !resource.keys.contains(where: { $0.hasPrefix("value") }) {
            return skip("a panel of other Observations (hasMember), which are read as entries of their own", into: &contents)
        }
        var problems: [FieldError] = []
        defer { contents.problems += problems }
        let codes = Self.codes(resource["code"] ?? nil)
        let time = effective(into: &problems)
        if codes.contains(where: { ObservationImportCodes.bloodPressurePanels.contains(ObservationImportCodes.key($0.system, $0.code)) }) {
            readComponents(at: time, into: &contents, problems: &problems)
            return
        }
        guard let type = Self.type(of: codes, field: "\(place).code", into: &problems) else { return }
        let value: Double
        let valueField: String
        if let quantity = resource["valueQuantity"] ?? nil {
            valueField = "\(place).valueQuantity"
            guard let read = Self.quantity(quantity, of: type, field: valueField, into: &problems) else { return }
            value = read
        } else if type == .sleepingHours, let hours = time?.hours {
            // Sleep written as its period only: its length is the value.
            (value, valueField) = (hours, "\(place).effectivePeriod")
        } else if type == .sleepingHours && time == nil {
            return  // The period that would give the value is already reported.
        } else {
            let other = resource.keys.first { $0.hasPrefix("value") }
            problems.append(
                FieldError(
                    field: "\(place).\(other ?? "valueQuantity")",
                    message: other == nil ? "is required" : "is not read: the value must be a valueQuantity"))
            return
        }
        guard let time else { return }
        contents.entries.append(
            SampleBatch.Entry(
                type: type.rawValue, value: value, at: time.at,
                fields: SampleBatch.Fields(
                    type: "\(place).code", value: valueField.hasSuffix("Quantity") ? "\(valueField).value" : valueField, at: time.field)))
    }

    /// The panel's components, each its own sample at the Observation's time.
    private func readComponents(at time: Effective?, into contents: inout FHIRBundleContents, problems: inout [FieldError]) {
        guard let components = (resource["component"] ?? nil) as? [(any Sendable)?], !components.isEmpty else {
            problems.append(FieldError(field: "\(place).component", message: "is required: a blood pressure panel holds its readings as components"))
            return
        }
        for (number, item) in components.enumerated() {
            let field = "\(place).component[\(number)]"
            guard let component = item as? JSONObject else {
                problems.append(FieldError(field: field, message: "must be an object"))
                continue
            }
            guard let type = Self.type(of: Self.codes(component["code"] ?? nil), field: "\(field).code", into: &problems) else { continue }
            if let absent = Self.dataAbsentReason(component) {
                contents.skippedObservations.append(
                    FHIRBundleContents.Skipped(
                        entry: index, reason: "component[\(number)] (\(type.rawValue)) has no value (dataAbsentReason \(absent))"))
                continue
            }
            guard let quantity = component["valueQuantity"] ?? nil else {
                problems.append(FieldError(field: "\(field).valueQuantity", message: "is required"))
                continue
            }
            guard let value = Self.quantity(quantity, of: type, field: "\(field).valueQuantity", into: &problems), let time else { continue }
            contents.entries.append(
                SampleBatch.Entry(
                    type: type.rawValue, value: value, at: time.at,
                    fields: SampleBatch.Fields(type: "\(field).code", value: "\(field).valueQuantity.value", at: time.field)))
        }
    }

    private func skip(_ reason: String, into contents: inout FHIRBundleContents) {
        contents.skip("Observation")
        contents.skippedObservations.append(FHIRBundleContents.Skipped(entry: index, reason: reason))
    }

    // MARK: Time

    /// When the Observation was made: `at` as sent (validated later with the upload's rules), the field
    /// it came from, and for a period its length in hours.
    struct Effective {
        var at: String
        var field: String
        var hours: Double?
    }

    private func effective(into problems: inout [FieldError]) -> Effective? {
        for name in ["effectiveDateTime", "effectiveInstant"] {
            guard let value = resource[name] ?? nil else { continue }
            guard let text = value as? String else {
                problems.append(FieldError(field: "\(place).\(name)", message: "must be a string"))
                return nil
            }
            return Effective(at: text, field: "\(place).\(name)")
        }
        if let value = resource["effectivePeriod"] ?? nil {
            let field = "\(place).effectivePeriod"
            guard let period = value as? JSONObject, let start = (period["start"] ?? nil) as? String else {
                problems.append(FieldError(field: "\(field).start", message: "is required (the sample's time is the period's start)"))
                return nil
            }
            var hours: Double?
            if let endValue = period["end"] ?? nil {
                guard let endText = endValue as? String, let end = Timestamp.parse(endText) else {
                    problems.append(FieldError(field: "\(field).end", message: "must be an RFC 3339 time such as 2026-03-01T08:00:00Z"))
                    return nil
                }
                if let begin = Timestamp.parse(start) {
                    guard end >= begin else {
                        problems.append(FieldError(field: "\(field).end", message: "must not be before start"))
                        return nil
                    }
                    hours = (end.timeIntervalSince(begin) / 3600 * 10_000).rounded() / 10_000
                }
            }
            return Effective(at: start, field: "\(field).start", hours: hours)
        }
        let other = resource.keys.first { $0.hasPrefix("effective") }
        problems.append(
            FieldError(
                field: "\(place).\(other ?? "effective[x]")",
                message: other == nil
                    ? "is required: effectiveDateTime, effectiveInstant or effectivePeriod"
                    : "is not read: the time must be effectiveDateTime, effectiveInstant or effectivePeriod"))
        return nil
    }

    // MARK: Codes and values

    /// The `system` and `code` of each coding of a CodeableConcept, the import's synonyms replaced.
    static func codes(_ concept: (any Sendable)?) -> [(system: String, code: String)] {
        let codings = ((concept as? JSONObject)?["coding"] ?? nil) as? [(any Sendable)?] ?? []
        return codings.compactMap { item in
            guard let coding = item as? JSONObject, let system = coding["system"] as? String, let code = coding["code"] as? String else {
                return nil
            }
            return ObservationImportCodes.synonyms[ObservationImportCodes.key(system, code)] ?? (system, code)
        }
    }

    private static func type(of codes: [(system: String, code: String)], field: String, into problems: inout [FieldError]) -> SampleType? {
        if let type = SampleType(observationCodes: codes) { return type }
        if codes.isEmpty {
            problems.append(FieldError(field: field, message: "must hold a coding with a system and a code (LOINC, see docs/fhir.md)"))
        } else {
            let named = codes.prefix(3).map { FHIRBundleImport.shortened($0.system + "|" + $0.code) }.joined(separator: ", ")
            problems.append(FieldError(field: field, message: "names no one sample type Data4Help imports (\(named); see docs/fhir.md)"))
        }
        return nil
    }

    /// A Quantity's value in `type`'s unit. The unit is its UCUM `code` (`system` absent or UCUM's); when the
    /// code is missing, `unit` is read as a UCUM code, so `"unit": "kg"` is read and `"unit": "mmHg"` is not.
    private static func quantity(_ value: any Sendable, of type: SampleType, field: String, into problems: inout [FieldError]) -> Double? {
        guard let quantity = value as? JSONObject else {
            problems.append(FieldError(field: field, message: "must be an object"))
            return nil
        }
        guard let number = number(quantity["value"] ?? nil) else {
            problems.append(FieldError(field: "\(field).value", message: "must be a number"))
            return nil
        }
        if let comparator = quantity["comparator"] ?? nil {
            problems.append(
                FieldError(
                    field: "\(field).comparator",
                    message: "is not read: a bound (\(FHIRBundleImport.shortened("\(comparator)"))) is not a measurement"))
            return nil
        }
        if let system = quantity["system"] ?? nil, (system as? String) != FHIRSystems.ucum {
            problems.append(FieldError(field: "\(field).system", message: "must be \(FHIRSystems.ucum) (UCUM)"))
            return nil
        }
        let accepted = UCUMConversion.accepted(for: type).joined(separator: ", ")
        let (unitField, code) =
            (quantity["code"] ?? nil).map { ("\(field).code", $0 as? String) } ?? ("\(field).unit", (quantity["unit"] ?? nil) as? String)
        guard let code else {
            problems.append(FieldError(field: "\(field).code", message: "is required: a UCUM unit (for \(type.rawValue): \(accepted))"))
            return nil
        }
        guard let conversion = UCUMConversion.into(type, from: code) else {
            problems.append(
                FieldError(
                    field: unitField,
                    message: "\(FHIRBundleImport.shortened(code)) is not a unit Data4Help imports for \(type.rawValue) (UCUM: \(accepted))"))
            return nil
        }
        return conversion.apply(number)
    }

    private static func number(_ value: (any Sendable)?) -> Double? {
        if let integer = value as? Int { return Double(integer) }
        return value as? Double
    }

    /// The code (or text) of a `dataAbsentReason`, when there is one.
    private static func dataAbsentReason(_ element: JSONObject) -> String? {
        guard let reason = element["dataAbsentReason"] ?? nil else { return nil }
        let concept = reason as? JSONObject
        let coding = ((concept?["coding"] ?? nil) as? [(any Sendable)?])?.first.flatMap { $0 as? JSONObject }
        let text = (coding?["code"] ?? nil) as? String ?? (concept?["text"] ?? nil) as? String ?? "given"
        return FHIRBundleImport.shortened(text)
    }
}
