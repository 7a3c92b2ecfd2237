import Foundation

/// What Apple Health's export means: reads the start tags an `XMLByteScanner` finds (`<Record>`, `<Correlation>`,
/// `<MetadataEntry>`) into samples, and counts what it skips and what is invalid. `AppleHealthParser` feeds it.
struct AppleHealthRecordMapper: XMLStartTagHandler {
    /// `<Record>` elements seen, including those inside correlations (mapped, skipped or invalid).
    private(set) var recordsSeen = 0
    /// Records of a type Data4Help keeps whose value, unit or dates cannot be used.
    private(set) var invalidCount = 0
    /// The first `maximumInvalidExamples` of them, with their line numbers.
    private(set) var invalidExamples: [AppleHealthInvalidRecord] = []
    /// The last valid IANA time zone of an `HKTimeZone` metadata entry, in file order (nil when there was none).
    private(set) var timeZone: String?

    /// When set, records of cumulative types are not returned as samples but kept, with their period and source,
    /// for `takeSourcedRecords()`.
    var separatesSources = false
    /// The sources of the records kept so far, indexed by `AppleHealthSourcedRecord.source`.
    private(set) var sources: [AppleHealthSource] = []
    private var sourcedRecords: [AppleHealthSourcedRecord] = []
    private var sourceIDs: [[UInt8]: Int32] = [:]
    /// The samples completed since the last `takeSamples()`.
    private var samples: [Sample] = []

    private var skippedCounts: [AppleHealthSkip: Int] = [:]
    /// Records are grouped by type in exports, so runs of the same skipped identifier are counted before building a String.
    private var pendingSkip: [UInt8] = []
    private var pendingSkipReason = AppleHealthSkipReason.unsupportedType
    private var pendingSkipCount = 0
    /// The last HKTimeZone value looked at, valid or not, so that the same value is validated once per run.
    private var lastTimeZoneCandidate: [UInt8] = []
    /// Samples starting after this are invalid (a clock set wrong, or a made-up file).
    private let notAfter: Double
    private let table = AppleHealthRecordTable()

    /// The element whose start tag is being read, when it is one that is mapped.
    private enum Element { case record, correlation, metadataEntry }
    private var element = Element.record
    /// The line of the tag being read.
    private var line = 1
    private var attributes = RecordAttributes()

    /// `notAfter`: seconds since 1970 past which a sample's start is in the future.
    init(notAfter: Double) {
        self.notAfter = notAfter
    }

    mutating func takeSamples() -> [Sample] {
        defer { samples = [] }
        return samples
    }

    /// The cumulative records completed since the last call (with `separatesSources`).
    mutating func takeSourcedRecords() -> [AppleHealthSourcedRecord] {
        defer { sourcedRecords.removeAll(keepingCapacity: true) }
        return sourcedRecords
    }

    /// Records and correlations not imported although nothing is wrong with them, by reason and identifier.
    var skipped: [AppleHealthSkip: Int] {
        var counts = skippedCounts
        if pendingSkipCount > 0 { counts[pendingSkipKey(), default: 0] += pendingSkipCount }
        return counts
    }

    // MARK: - Tags

    mutating func startTag(_ name: UnsafeBufferPointer<UInt8>, line: Int) -> Bool {
        if AppleHealthBytes.equal(Names.record, name) {
            element = .record
        } else if AppleHealthBytes.equal(Names.correlation, name) {
            element = .correlation
        } else if AppleHealthBytes.equal(Names.metadataEntry, name) {
            element = .metadataEntry
        } else {
            return false
        }
        self.line = line
        attributes.reset()
        return true
    }

    mutating func attribute(_ name: UnsafeBufferPointer<UInt8>, value: Range<Int>, hasReference: Bool) {
        guard let attribute = RecordAttribute.named(name) else { return }
        attributes[attribute] = value
        if hasReference { attributes.needsDecoding = true }
    }

    mutating func startTagEnded(_ tag: UnsafeBufferPointer<UInt8>) {
        Self.withDecodedValues(tag, attributes) { tag, attributes in
            switch element {
            case .record: mapRecord(tag, attributes)
            case .correlation: mapCorrelation(tag, attributes)
            case .metadataEntry: readMetadata(tag, attributes)
            }
        }
    }

    /// Runs `body` on the tag itself or, when a captured value holds references, on a copy with them decoded.
    private static func withDecodedValues(
        _ tag: UnsafeBufferPointer<UInt8>, _ attributes: RecordAttributes,
        _ body: (UnsafeBufferPointer<UInt8>, RecordAttributes) -> Void
    ) {
        guard attributes.needsDecoding else {
            body(tag, attributes)
            return
        }
        var copy = Array(tag)
        var decoded = attributes
        decoded.decode(in: &copy)
        copy.withUnsafeBufferPointer { body($0, decoded) }
    }

    // MARK: - Records

    private mutating func mapRecord(_ tag: UnsafeBufferPointer<UInt8>, _ a: RecordAttributes) {
        recordsSeen += 1
        func slice(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: tag[range]) }
        guard let typeRange = a[.type] else { return skip(.unsupportedType, Names.recordWithoutType[...]) }
        let identifier = slice(typeRange)
        guard let type = table.type(identifier) else { return skip(.unsupportedType, identifier) }
        /// The value of `attribute`, or nil once the record is counted invalid for lacking it.
        func required(_ attribute: RecordAttribute) -> UnsafeBufferPointer<UInt8>? {
            guard let range = a[attribute] else {
                invalid(identifier, "it has no \(attribute)")
                return nil
            }
            return slice(range)
        }
        /// The date of `attribute`, or nil once the record is counted invalid for it.
        func date(_ attribute: RecordAttribute) -> Double? {
            guard let text = required(attribute) else { return nil }
            guard let date = AppleHealthDate.secondsSince1970(text) else {
                invalid(identifier, "its \(attribute) \(Self.quoted(text)) is not a date and time with a UTC offset")
                return nil
            }
            return date
        }
        guard let start = date(.startDate) else { return }
        let value: Double
        switch type {
        case .standHour:
            guard let category = required(.value) else { return }
            if AppleHealthBytes.equal(table.stood, category) {
                value = 1
            } else if AppleHealthBytes.equal(table.idle, category) {
                return skip(.notStood, identifier)
            } else {
                return invalid(identifier, "its value \(Self.quoted(category)) is not a stand hour value")
            }
        case .sleepAnalysis:
            guard let category = required(.value) else { return }
            if AppleHealthBytes.hasPrefix(category, table.asleepPrefix) {
                guard let end = date(.endDate) else { return }
                guard end >= start else { return invalid(identifier, "it ends before it starts") }
                value = (end - start) / 3600
            } else if AppleHealthBytes.equal(table.inBed, category) || AppleHealthBytes.equal(table.awake, category) {
                return skip(.notAsleep, identifier)
            } else {
                return invalid(identifier, "its value \(Self.quoted(category)) is not a sleep analysis value")
            }
        default:
            guard let text = required(.value) else { return }
            guard let number = AppleHealthNumber.parse(text), number.isFinite else {
                return invalid(identifier, "its value \(Self.quoted(text)) is not a number")
            }
            guard let unit = required(.unit) else { return }
            guard let converted = table.convert(number, type, unit: unit) else {
                return invalid(identifier, "its unit \(Self.quoted(unit)) is not one Data4Help converts")
            }
            value = converted
        }
        let sampleType = type.sampleType
        guard value.isFinite, sampleType.range.contains(value) else {
            return invalid(
                identifier,
                """
                \(Self.format(value)) \(sampleType.unit) is out of range \
                (\(Self.format(sampleType.range.lowerBound))–\(Self.format(sampleType.range.upperBound)) \(sampleType.unit))
                """)
        }
        guard start <= notAfter else {
            return invalid(identifier, "it starts in the future (\(Self.quoted(slice(a[.startDate]!))))")
        }
        if separatesSources, sampleType.aggregation == .dailyTotal {
            // Sleep's end is its start plus its length; a quantity's is its endDate when that is usable.
            var end = start
            if type == .sleepAnalysis {
                end = start + value * 3600
            } else if let endRange = a[.endDate], let parsed = AppleHealthDate.secondsSince1970(slice(endRange)), parsed >= start {
                end = parsed
            }
            sourcedRecords.append(
                AppleHealthSourcedRecord(
                    type: sampleType, value: value, start: start, end: end, source: sourceID(tag, a)))
            return
        }
        samples.append(Sample(type: sampleType, value: value, at: Date(timeIntervalSince1970: start)))
    }

    /// The index of the record's source, registering it on first sight: the kind from the `device` description
    /// (`model:Watch`, `model:iPhone`), else from words in the source's name.
    private mutating func sourceID(_ tag: UnsafeBufferPointer<UInt8>, _ a: RecordAttributes) -> Int32 {
        let name = a[.sourceName].map { Array(tag[$0]) } ?? []
        if let id = sourceIDs[name] { return id }
        guard sources.count < AppleHealthParser.maximumSources else { return Int32(sources.count - 1) }
        func contains(_ range: Range<Int>?, _ word: [UInt8]) -> Bool {
            guard let range, range.count >= word.count else { return false }
            return (range.lowerBound...(range.upperBound - word.count)).contains { start in
                AppleHealthBytes.equal(word, UnsafeBufferPointer(rebasing: tag[start..<start + word.count]))
            }
        }
        let kind: AppleHealthSource.Kind =
            contains(a[.device], Names.watchModel)
            ? .watch
            : contains(a[.device], Names.phoneModel)
                ? .phone
                : contains(a[.sourceName], Names.watchWord)
                    ? .watch
                    : contains(a[.sourceName], Names.phoneWord) ? .phone : .other
        let id = Int32(sources.count)
        sources.append(AppleHealthSource(name: String(decoding: name, as: UTF8.self), kind: kind))
        sourceIDs[name] = id
        return id
    }

    /// A blood-pressure correlation's samples come from its child records; other correlations (food) are skipped.
    private mutating func mapCorrelation(_ tag: UnsafeBufferPointer<UInt8>, _ a: RecordAttributes) {
        guard let typeRange = a[.type] else { return skip(.unsupportedType, Names.correlationWithoutType[...]) }
        let identifier = UnsafeBufferPointer(rebasing: tag[typeRange])
        if !AppleHealthBytes.equal(table.bloodPressureCorrelation, identifier) { skip(.unsupportedType, identifier) }
    }

    /// `<MetadataEntry key="HKTimeZone" value="Europe/Rome"/>`: the zone the device was in. Only a value that
    /// looks like an IANA name is given to `TimeZone(identifier:)` (which reads a file by that name), and the
    /// same value is looked at once per run of them (every sleep record carries one).
    private mutating func readMetadata(_ tag: UnsafeBufferPointer<UInt8>, _ a: RecordAttributes) {
        guard let keyRange = a[.key], let valueRange = a[.value],
            AppleHealthBytes.equal(Names.timeZoneKey, UnsafeBufferPointer(rebasing: tag[keyRange]))
        else { return }
        let value = UnsafeBufferPointer(rebasing: tag[valueRange])
        guard value.count <= AppleHealthParser.maximumTimeZoneBytes else { return }
        if AppleHealthBytes.equal(lastTimeZoneCandidate, value) { return }
        lastTimeZoneCandidate.removeAll(keepingCapacity: true)
        lastTimeZoneCandidate.append(contentsOf: value)
        guard Self.looksLikeTimeZoneName(value) else { return }
        let name = String(decoding: value, as: UTF8.self)
        if TimeZone(identifier: name) != nil { timeZone = name }
    }

    /// Letters, digits, `_ + -` and `/` between non-empty parts that do not start with a dot: `Europe/Rome`,
    /// `America/Argentina/Buenos_Aires`, `Etc/GMT+1`; never a path out of the zone directory.
    static func looksLikeTimeZoneName(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = value.first, first.isASCIILetter, value.last != UInt8(ascii: "/") else { return false }
        var previous = UInt8(ascii: "/")
        for byte in value {
            let allowed =
                byte.isASCIILetter || byte &- UInt8(ascii: "0") < 10 || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "+") || byte == .hyphen || byte == UInt8(ascii: "/")
            guard allowed, !(byte == UInt8(ascii: "/") && previous == UInt8(ascii: "/")) else { return false }
            previous = byte
        }
        return true
    }

    private mutating func invalid(_ identifier: UnsafeBufferPointer<UInt8>, _ reason: @autoclosure () -> String) {
        invalidCount += 1
        guard invalidExamples.count < AppleHealthParser.maximumInvalidExamples else { return }
        invalidExamples.append(
            AppleHealthInvalidRecord(
                line: line, identifier: String(decoding: identifier.prefix(200), as: UTF8.self), reason: reason()))
    }

    /// An attribute value as a message shows it: quoted, and cut short (it comes from the file).
    private static func quoted(_ value: UnsafeBufferPointer<UInt8>) -> String {
        let shown = String(decoding: value.prefix(40), as: UTF8.self)
        return "\"" + shown + (value.count > 40 ? "…" : "") + "\""
    }

    /// A number as a message shows it: at most six significant digits, no trailing zeros.
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "not a number" : value < 0 ? "-∞" : "∞" }
        return String(format: "%.6g", value)
    }

    private mutating func skip(_ reason: AppleHealthSkipReason, _ identifier: UnsafeBufferPointer<UInt8>) {
        if pendingSkipCount > 0, pendingSkipReason == reason, AppleHealthBytes.equal(pendingSkip, identifier) {
            pendingSkipCount += 1
            return
        }
        flushPendingSkip()
        pendingSkip.removeAll(keepingCapacity: true)
        pendingSkip.append(contentsOf: identifier.prefix(200))  // a hostile file's identifiers must not grow memory
        pendingSkipReason = reason
        pendingSkipCount = 1
    }

    private mutating func skip(_ reason: AppleHealthSkipReason, _ identifier: ArraySlice<UInt8>) {
        identifier.withUnsafeBufferPointer { skip(reason, $0) }
    }

    private func pendingSkipKey() -> AppleHealthSkip {
        let key = AppleHealthSkip(reason: pendingSkipReason, identifier: String(decoding: pendingSkip, as: UTF8.self))
        return skippedCounts[key] != nil || skippedCounts.count < AppleHealthParser.maximumSkippedIdentifiers
            ? key : AppleHealthSkip(reason: pendingSkipReason, identifier: AppleHealthParser.otherIdentifiers)
    }

    private mutating func flushPendingSkip() {
        guard pendingSkipCount > 0 else { return }
        skippedCounts[pendingSkipKey(), default: 0] += pendingSkipCount
        pendingSkipCount = 0
    }
}

/// The attributes that matter, each case named as the attribute is in the export.
private enum RecordAttribute: Int, CaseIterable {
    case type, unit, value, startDate, endDate, key, sourceName, device

    /// The cases' names as bytes, indexed by raw value.
    static let names: [[UInt8]] = allCases.map { Array(String(describing: $0).utf8) }

    /// The attribute called `name`, if it is one that matters.
    static func named(_ name: UnsafeBufferPointer<UInt8>) -> RecordAttribute? {
        for k in names.indices where AppleHealthBytes.equal(names[k], name) { return RecordAttribute(rawValue: k) }
        return nil
    }
}

/// Where the values of the attributes that matter are in the tag. One is kept by the mapper and reset for each
/// tag, so reading a record allocates nothing.
private struct RecordAttributes {
    private var ranges = [Range<Int>?](repeating: nil, count: RecordAttribute.allCases.count)
    /// One of the captured values contains an entity or character reference and must be decoded.
    var needsDecoding = false

    subscript(_ attribute: RecordAttribute) -> Range<Int>? {
        get { ranges[attribute.rawValue] }
        set { ranges[attribute.rawValue] = newValue }
    }

    mutating func reset() {
        for k in ranges.indices { ranges[k] = nil }
        needsDecoding = false
    }

    mutating func decode(in tag: inout [UInt8]) {
        for k in ranges.indices { ranges[k] = ranges[k].map { XMLReferences.decode(in: &tag, $0) } }
        needsDecoding = false
    }
}

/// The element names and values the mapper recognises, as bytes.
private enum Names {
    static let record = Array("Record".utf8)
    static let correlation = Array("Correlation".utf8)
    static let metadataEntry = Array("MetadataEntry".utf8)
    static let timeZoneKey = Array("HKTimeZone".utf8)
    static let watchModel = Array("model:Watch".utf8)
    static let phoneModel = Array("model:iPhone".utf8)
    static let watchWord = Array("Watch".utf8)
    static let phoneWord = Array("iPhone".utf8)
    static let recordWithoutType = Array("(Record without type)".utf8)
    static let correlationWithoutType = Array("(Correlation without type)".utf8)
}
