import Foundation

// The policy's JSON form, as `docs/automated-sos.md` describes it: omitted fields take their defaults,
// unknown fields are errors (a misspelt `cooldwon` must not silently mean "the default"), and a threshold
// is a number or the name of a table. What the synthesized coding would write for an enum with a payload
// (`{"constant":{"_0":140}}`) is still read, so settings stored before this format keep loading.

/// Any key, to see the fields a container really has.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

extension Decoder {
    /// Throws for a field `Keys` does not name, with the field in the coding path.
    func rejectUnknownFields<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type) throws {
        let container = try container(keyedBy: AnyCodingKey.self)
        for key in container.allKeys where Keys(stringValue: key.stringValue) == nil {
            let known = Keys.allCases.map(\.stringValue).joined(separator: ", ")
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath + [key], debugDescription: "unknown field \"\(key.stringValue)\" (known: \(known))"))
        }
    }
}

extension SOSPolicy {
    enum CodingKeys: String, CodingKey, CaseIterable { case rules, activity }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownFields(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            rules: try container.decode([SOSRule].self, forKey: .rules),
            activity: try container.decodeIfPresent(SOSActivity.self, forKey: .activity) ?? .default)
    }
}

extension SOSRule {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, type, comparison, threshold, persistence, cooldown, suppressedWhileActive
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownFields(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id),
            type: try container.decode(SOSSampleType.self, forKey: .type),
            comparison: try container.decode(SOSComparison.self, forKey: .comparison),
            threshold: try container.decode(SOSThreshold.self, forKey: .threshold),
            persistence: try container.decodeIfPresent(SOSPersistence.self, forKey: .persistence) ?? .default,
            cooldown: try container.decodeIfPresent(TimeInterval.self, forKey: .cooldown) ?? Self.defaultCooldown,
            suppressedWhileActive: try container.decodeIfPresent(Bool.self, forKey: .suppressedWhileActive) ?? false)
        guard cooldown >= 0 else {
            throw DecodingError.dataCorruptedError(forKey: .cooldown, in: container, debugDescription: "must not be negative (seconds)")
        }
    }
}

extension SOSPersistence {
    enum CodingKeys: String, CodingKey, CaseIterable { case readings, within }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownFields(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            readings: try container.decodeIfPresent(Int.self, forKey: .readings) ?? Self.default.readings,
            within: try container.decodeIfPresent(TimeInterval.self, forKey: .within) ?? Self.default.within)
        guard readings >= 1 else {
            throw DecodingError.dataCorruptedError(forKey: .readings, in: container, debugDescription: "must be at least 1")
        }
        guard within >= 0 else {
            throw DecodingError.dataCorruptedError(forKey: .within, in: container, debugDescription: "must not be negative (seconds)")
        }
    }
}

extension SOSActivity {
    enum CodingKeys: String, CodingKey, CaseIterable { case stepThreshold, window, activeEnergyPerMinute, workoutRecovery }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownFields(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            stepThreshold: try container.decodeIfPresent(Double.self, forKey: .stepThreshold) ?? Self.default.stepThreshold,
            window: try container.decodeIfPresent(TimeInterval.self, forKey: .window) ?? Self.default.window,
            activeEnergyPerMinute: try container.decodeIfPresent(Double.self, forKey: .activeEnergyPerMinute)
                ?? Self.defaultActiveEnergyPerMinute,
            workoutRecovery: try container.decodeIfPresent(TimeInterval.self, forKey: .workoutRecovery) ?? Self.defaultWorkoutRecovery)
        guard window > 0 else {
            throw DecodingError.dataCorruptedError(forKey: .window, in: container, debugDescription: "must be positive (seconds)")
        }
    }
}

extension SOSThreshold {
    /// A number is a constant; a string names a table.
    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.singleValueContainer() {
            if let value = try? container.decode(Double.self) {
                self = .constant(value)
                return
            }
            if let name = try? container.decode(String.self) {
                guard let table = Self.tables[name] else {
                    throw DecodingError.dataCorruptedError(
                        in: container,
                        debugDescription: "unknown threshold \"\(name)\": a number, or one of \(Self.tables.keys.sorted().joined(separator: ", "))")
                }
                self = table
                return
            }
        }
        // The synthesized form of earlier versions.
        if let legacy = try? decoder.container(keyedBy: AnyCodingKey.self) {
            if let constant = try? legacy.nestedContainer(keyedBy: AnyCodingKey.self, forKey: AnyCodingKey(stringValue: "constant")),
                let value = try? constant.decode(Double.self, forKey: AnyCodingKey(stringValue: "_0"))
            {
                self = .constant(value)
                return
            }
            if legacy.contains(AnyCodingKey(stringValue: "heartRateLow")) {
                self = .heartRateLow
                return
            }
            if legacy.contains(AnyCodingKey(stringValue: "heartRateHigh")) {
                self = .heartRateHigh
                return
            }
        }
        throw DecodingError.typeMismatch(
            SOSThreshold.self,
            .init(
                codingPath: decoder.codingPath, debugDescription: "expected a number or one of \(Self.tables.keys.sorted().joined(separator: ", "))"))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .constant(let value): try container.encode(value)
        case .heartRateLow: try container.encode("heart_rate_low")
        case .heartRateHigh: try container.encode("heart_rate_high")
        }
    }

    static let tables: [String: SOSThreshold] = ["heart_rate_low": .heartRateLow, "heart_rate_high": .heartRateHigh]
}

extension SOSSampleType {
    /// Names the wrong type and the right ones, rather than "cannot initialize from invalid String value".
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let type = Self(rawValue: name) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "unknown sample type \"\(name)\" (known: \(Self.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        self = type
    }
}

extension SOSComparison {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let comparison = Self(rawValue: name) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown comparison \"\(name)\" (known: above, below)")
        }
        self = comparison
    }
}
