/// What a single request may ask a person for: the samples of one type, or their positions (Track4Run's
/// `position`). Stored as a code beside the sample types' own (`single_requests.types`, `access_log.types`);
/// a position code never matches a sample's type, so the samples' queries need no case of their own.
package enum RequestedType: Hashable, Sendable {
    case sample(SampleType)
    case position

    /// Outside `SampleType`'s codes (1–17), with room for more sample types before it.
    static let positionCode: Int16 = 100

    package init?(rawValue: String) {
        if rawValue == "position" {
            self = .position
        } else if let type = SampleType(rawValue: rawValue) {
            self = .sample(type)
        } else {
            return nil
        }
    }

    init?(code: Int16) {
        if code == Self.positionCode {
            self = .position
        } else if let type = SampleType(code: code) {
            self = .sample(type)
        } else {
            return nil
        }
    }

    package var rawValue: String {
        switch self {
        case .sample(let type): type.rawValue
        case .position: "position"
        }
    }

    var code: Int16 {
        switch self {
        case .sample(let type): type.code
        case .position: Self.positionCode
        }
    }

    package var sampleType: SampleType? {
        if case .sample(let type) = self { return type }
        return nil
    }
}

extension [RequestedType] {
    /// The sample types among them, in their order.
    var sampleTypes: [SampleType] { compactMap(\.sampleType) }
    var includesPositions: Bool { contains(.position) }
}
