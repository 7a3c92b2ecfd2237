import Foundation

/// What a person takes back of their own samples (issue 29, item 4): one sample, a time range of one type,
/// or every sample of one type. Samples are keyed by (person, type, time), so a type and a time name one.
package struct SampleCorrection: Sendable, Equatable {
    package enum Extent: Sendable, Equatable {
        /// The one sample of the type taken at this time.
        case one(at: Date)
        /// Every sample of the type from `from` to `to`, both inclusive (as `GET /v1/me/samples` reads them);
        /// nil is open on that side, so `range(nil, nil)` is every sample of the type.
        case range(from: Date?, to: Date?)
    }

    package var type: SampleType
    package var extent: Extent

    package init(type: SampleType, extent: Extent) {
        self.type = type
        self.extent = extent
    }

    /// The inclusive bounds of what is deleted (nil: open on that side); one sample is the range of its time.
    package var from: Date? {
        switch extent {
        case .one(let at): at
        case .range(let from, _): from
        }
    }

    package var to: Date? {
        switch extent {
        case .one(let at): at
        case .range(_, let to): to
        }
    }

    /// Reads a correction as the API and the console receive it: a type's name and RFC 3339 times. Every
    /// problem is listed, each naming its field: the type missing or unknown, a time that is not one, `at`
    /// together with `from` or `to`, or `from` after `to`.
    package static func parse(type: String?, at: String?, from: String?, to: String?) throws(SampleError) -> SampleCorrection {
        var errors: [FieldError] = []
        var sampleType: SampleType?
        switch type.map({ $0.trimmingCharacters(in: .whitespaces) }) {
        case nil, ""?:
            errors.append(FieldError(field: "type", message: "is required"))
        case let name?:
            sampleType = SampleType(rawValue: name)
            if sampleType == nil {
                errors.append(
                    FieldError(field: "type", message: "must be one of \(SampleType.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
        }
        func time(_ text: String?, _ field: String) -> Date? {
            guard let text, !text.isEmpty else { return nil }
            if let date = Timestamp.parse(text) { return date }
            errors.append(FieldError(field: field, message: "must be an RFC 3339 time such as 2026-03-01T08:00:00Z"))
            return nil
        }
        let atTime = time(at, "at")
        let fromTime = time(from, "from")
        let toTime = time(to, "to")
        let hasAt = !(at ?? "").isEmpty
        if hasAt, !(from ?? "").isEmpty || !(to ?? "").isEmpty {
            errors.append(FieldError(field: "at", message: "names one sample: give either at, or from and to, not both"))
        }
        if let fromTime, let toTime, fromTime > toTime {
            errors.append(FieldError(field: "from", message: "must not be after to"))
        }
        guard errors.isEmpty, let sampleType else { throw .invalid(errors) }
        if hasAt, let atTime { return SampleCorrection(type: sampleType, extent: .one(at: atTime)) }
        return SampleCorrection(type: sampleType, extent: .range(from: fromTime, to: toTime))
    }
}
