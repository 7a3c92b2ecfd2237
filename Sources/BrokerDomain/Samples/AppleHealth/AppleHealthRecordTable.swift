/// The record types and their units as bytes, so that matching a `<Record>` never builds a String.
struct AppleHealthRecordTable: Sendable {
    private struct Entry: Sendable {
        var type: AppleHealthRecordType
        var identifier: [UInt8]
        var units: [(unit: [UInt8], factor: Double, offset: Double)]
    }

    private let entries: [Entry]
    let bloodPressureCorrelation = Array(AppleHealthRecordType.bloodPressureCorrelation.utf8)
    let stood = Array(AppleHealthRecordType.stood.utf8)
    let idle = Array(AppleHealthRecordType.idle.utf8)
    let asleepPrefix = Array(AppleHealthRecordType.asleepPrefix.utf8)
    let inBed = Array(AppleHealthRecordType.inBed.utf8)
    let awake = Array(AppleHealthRecordType.awake.utf8)

    init() {
        entries = AppleHealthRecordType.allCases.map { type in
            Entry(
                type: type, identifier: Array(type.identifier.utf8),
                units: type.conversions.map { (Array($0.unit.utf8), $0.factor, $0.offset) })
        }
    }

    func type(_ identifier: UnsafeBufferPointer<UInt8>) -> AppleHealthRecordType? {
        entries.first { AppleHealthBytes.equal($0.identifier, identifier) }?.type
    }

    /// `value` in our unit, or nil when HealthKit's `unit` is not one this type knows.
    func convert(_ value: Double, _ type: AppleHealthRecordType, unit: UnsafeBufferPointer<UInt8>) -> Double? {
        entries[type.rawValue].units.first { AppleHealthBytes.equal($0.unit, unit) }.map { value * $0.factor + $0.offset }
    }
}
