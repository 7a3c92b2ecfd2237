import Foundation

/// Streams Apple Health's export.xml into samples: an `XMLByteScanner` (which accepts the file in chunks split
/// anywhere and holds at most one chunk plus one tag, whatever the file's size) telling an
/// `AppleHealthRecordMapper` its records.
///
/// Samples are returned as their records complete; the file is only valid once `finish()` returns, so a caller that
/// must store nothing from a bad file keeps them in one transaction until then. After an error, every call throws it.
package struct AppleHealthParser: Sendable {
    /// The largest tag (with its attributes) accepted; Apple's records are well under 2 KiB.
    package static let maximumTagBytes = 1 << 20
    /// The deepest element nesting accepted; Apple's exports nest four deep.
    package static let maximumDepth = 32
    /// The longest element name accepted (open elements' names are kept until they close).
    package static let maximumNameBytes = 256
    /// Distinct (reason, identifier) pairs counted in `skipped`; past it, the rest are counted under `otherIdentifiers`.
    package static let maximumSkippedIdentifiers = 1000
    package static let otherIdentifiers = "(other)"
    /// Invalid records described in `invalidExamples`; the rest are only counted.
    package static let maximumInvalidExamples = 5
    /// The longest HKTimeZone value considered (IANA names are under 40 bytes).
    static let maximumTimeZoneBytes = 64
    /// Distinct sources told apart; past it (no real export comes near), the rest share one.
    package static let maximumSources = 10_000

    private var scanner = XMLByteScanner(
        rootElement: "HealthData", maximumTagBytes: Self.maximumTagBytes, maximumDepth: Self.maximumDepth,
        maximumNameBytes: Self.maximumNameBytes)
    private var records: AppleHealthRecordMapper
    /// The first error; the parser refuses everything after it.
    private var failure: AppleHealthImportError?

    /// `<Record>` elements seen, including those inside correlations (mapped, skipped or invalid).
    package var recordsSeen: Int { records.recordsSeen }
    /// Records of a type Data4Help keeps whose value, unit or dates cannot be used.
    package var invalidCount: Int { records.invalidCount }
    /// The first `maximumInvalidExamples` of them, with their line numbers.
    package var invalidExamples: [AppleHealthInvalidRecord] { records.invalidExamples }
    /// The last valid IANA time zone of an `HKTimeZone` metadata entry, in file order (nil when there was none).
    package var timeZone: String? { records.timeZone }
    /// Newlines before the byte the scanner has reached, plus one: the line being read.
    package var line: Int { scanner.line }

    /// When set, records of cumulative types are not returned by `feed` but kept, with their period and source,
    /// for `takeSourcedRecords()`: an import resolves overlapping sources before storing them.
    package var separatesSources: Bool {
        get { records.separatesSources }
        set { records.separatesSources = newValue }
    }
    /// The sources of the records kept so far, indexed by `AppleHealthSourcedRecord.source`.
    package var sources: [AppleHealthSource] { records.sources }

    /// The cumulative records completed since the last call (with `separatesSources`).
    package mutating func takeSourcedRecords() -> [AppleHealthSourcedRecord] { records.takeSourcedRecords() }

    /// Source indices from the highest priority to the lowest: watches, then phones, then apps, by name within each.
    package var sourcePriority: [Int32] {
        sources.indices.sorted { (sources[$0].kind, sources[$0].name, $0) < (sources[$1].kind, sources[$1].name, $1) }.map { Int32($0) }
    }

    /// Records and correlations not imported although nothing is wrong with them: types Data4Help does not keep,
    /// category values that are no sample (stand hour Idle, sleep InBed/Awake).
    package var skipped: [AppleHealthSkip: Int] { records.skipped }

    /// `now`: what "in the future" is judged against (with `SampleBatch.allowedClockSkew`, as for uploads).
    package init(now: Date) {
        records = AppleHealthRecordMapper(notAfter: now.addingTimeInterval(SampleBatch.allowedClockSkew).timeIntervalSince1970)
    }

    /// Feeds the next chunk of the file (split anywhere, even inside a tag or a UTF-8 sequence) and returns the samples
    /// completed by it.
    package mutating func feed(_ bytes: some Collection<UInt8>) throws(AppleHealthImportError) -> [Sample] {
        if let failure { throw failure }
        var result: Result<Void, XMLScanError> = .success(())
        let contiguous: Void? = bytes.withContiguousStorageIfAvailable { buffer in result = scan(buffer) }
        if contiguous == nil {
            Array(bytes).withUnsafeBufferPointer { buffer in result = scan(buffer) }
        }
        if case .failure(let error) = result { try fail(error) }
        return records.takeSamples()
    }

    /// Ends the input: throws `.notAppleHealth` if no `<HealthData>` root was seen, `.truncated` unless it was closed.
    package mutating func finish() throws(AppleHealthImportError) {
        if let failure { throw failure }
        do throws(XMLScanError) {
            try scanner.finish()
        } catch {
            try fail(error)
        }
    }

    private mutating func scan(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<Void, XMLScanError> {
        do throws(XMLScanError) {
            try scanner.scan(buffer, &records)
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// Records the scanner's error in the import's terms, and throws it.
    private mutating func fail(_ error: XMLScanError) throws(AppleHealthImportError) -> Never {
        let failure: AppleHealthImportError =
            switch error {
            case .empty: .empty
            case .notXML: .notXML
            case .notUTF8: .notUTF8
            case .wrongRoot: .notAppleHealth
            case .truncated: .truncated
            case .entityDeclarationsNotAllowed: .entityDeclarationsNotAllowed
            case .malformed(let reason): .malformed(reason)
            }
        self.failure = failure
        throw failure
    }
}
