import Foundation

/// An upload as sent (type, value and time still as text), validated all at once: either every sample is
/// valid, or the answer lists every offending index and nothing is stored.
package struct SampleBatch: Sendable {
    /// One sample as received; `line` is set for CSV bodies (1-based, the header is line 1), `fields` for
    /// samples read out of a document of another shape (a FHIR Bundle), whose problems name its own fields.
    package struct Entry: Sendable {
        package var type: String
        package var value: Double?
        package var at: String
        package var line: Int?
        package var fields: Fields?

        package init(type: String, value: Double?, at: String, line: Int? = nil, fields: Fields? = nil) {
            self.type = type
            self.value = value
            self.at = at
            self.line = line
            self.fields = fields
        }
    }

    /// Where an entry's type, value and time were read, as the problem's `field` names them
    /// (`entry[3].resource.valueQuantity.value`).
    package struct Fields: Sendable {
        package var type: String
        package var value: String
        package var at: String

        package init(type: String, value: String, at: String) {
            self.type = type
            self.value = value
            self.at = at
        }
    }

    package static let maximumCount = 10_000
    /// Devices' clocks drift; more than this ahead of the server is not a measurement.
    package static let allowedClockSkew: TimeInterval = 5 * 60

    /// The valid samples, or every problem found (field names like `samples[3].value`, or `line 4` for CSV).
    package static func validate(_ entries: [Entry], now: Date, limit: Int = maximumCount)
        -> Result<[Sample], SampleError>
    {
        guard !entries.isEmpty else {
            return .failure(.invalid([FieldError(field: "samples", message: "must hold at least one sample")]))
        }
        guard entries.count <= limit else {
            return .failure(.invalid([FieldError(field: "samples", message: "must hold at most \(limit) samples per upload")]))
        }
        let latest = now.addingTimeInterval(allowedClockSkew)
        var samples: [Sample] = []
        samples.reserveCapacity(entries.count)
        var errors: [FieldError] = []
        for (index, entry) in entries.enumerated() {
            let place = entry.line.map { "line \($0)" } ?? "samples[\(index)]"
            func fail(_ field: String, _ message: String) {
                if let fields = entry.fields {
                    let name = field == "type" ? fields.type : field == "value" ? fields.value : fields.at
                    return errors.append(FieldError(field: name, message: message))
                }
                errors.append(
                    FieldError(field: entry.line == nil ? "\(place).\(field)" : place, message: entry.line == nil ? message : "\(field) \(message)"))
            }
            guard let type = SampleType(rawValue: entry.type) else {
                fail("type", "is not a known type (\(SampleType.allCases.map(\.rawValue).joined(separator: ", ")))")
                continue
            }
            guard let value = entry.value, value.isFinite else {
                fail("value", "must be a finite number")
                continue
            }
            guard type.range.contains(value) else {
                fail("value", "must be within \(format(type.range.lowerBound))–\(format(type.range.upperBound)) \(type.unit) for \(type.rawValue)")
                continue
            }
            guard let at = Timestamp.parse(entry.at) else {
                fail("at", "must be an RFC 3339 time such as 2026-03-01T08:00:00Z")
                continue
            }
            guard at <= latest else {
                fail("at", "is more than 5 minutes in the future")
                continue
            }
            samples.append(Sample(type: type, value: value, at: at))
        }
        return errors.isEmpty ? .success(samples) : .failure(.invalid(FieldError.firstHundred(errors, of: "samples")))
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
