import Foundation

/// Streams Apple Health's export.xml into samples: a hand-written, incremental XML scanner that accepts the file in
/// chunks split anywhere and holds at most one chunk plus one tag, whatever the file's size.
///
/// Foundation's XMLParser is not used: its entity handling and memory behaviour are not under our control. This scanner
/// never expands an entity: the DOCTYPE is skipped uninterpreted (a DOCTYPE declaring entities is refused, which is
/// how billion laughs is stopped), and attribute values may only use the five predefined entities and character
/// references.
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

    /// `<Record>` elements seen, including those inside correlations (mapped, skipped or invalid).
    package private(set) var recordsSeen = 0
    /// Records of a type Data4Help keeps whose value, unit or dates cannot be used.
    package private(set) var invalidCount = 0
    /// The first `maximumInvalidExamples` of them, with their line numbers.
    package private(set) var invalidExamples: [AppleHealthInvalidRecord] = []
    /// The last valid IANA time zone of an `HKTimeZone` metadata entry, in file order (nil when there was none).
    package private(set) var timeZone: String?
    /// Newlines before the byte the scanner has reached, plus one: the line being read.
    package private(set) var line = 1

    /// When set, records of cumulative types are not returned by `feed` but kept, with their period and source,
    /// for `takeSourcedRecords()`: an import resolves overlapping sources before storing them.
    package var separatesSources = false
    /// The sources of the records kept so far, indexed by `AppleHealthSourcedRecord.source`.
    package private(set) var sources: [AppleHealthSource] = []
    /// Distinct sources told apart; past it (no real export comes near), the rest share one.
    package static let maximumSources = 10_000
    private var sourcedRecords: [AppleHealthSourcedRecord] = []
    private var sourceIDs: [[UInt8]: Int32] = [:]

    /// The cumulative records completed since the last call (with `separatesSources`).
    package mutating func takeSourcedRecords() -> [AppleHealthSourcedRecord] {
        defer { sourcedRecords.removeAll(keepingCapacity: true) }
        return sourcedRecords
    }

    /// Source indices from the highest priority to the lowest: watches, then phones, then apps, by name within each.
    package var sourcePriority: [Int32] {
        sources.indices.sorted { (sources[$0].kind, sources[$0].name, $0) < (sources[$1].kind, sources[$1].name, $1) }.map { Int32($0) }
    }

    /// Records and correlations not imported although nothing is wrong with them: types Data4Help does not keep,
    /// category values that are no sample (stand hour Idle, sleep InBed/Awake).
    package var skipped: [AppleHealthSkip: Int] {
        var counts = skippedCounts
        if pendingSkipCount > 0 { counts[pendingSkipKey(), default: 0] += pendingSkipCount }
        return counts
    }

    /// Where the scanner is, between two bytes.
    private enum Mode: Sendable {
        case content, afterLessThan, tag, bang, comment, processingInstruction, cdata, doctype
    }

    /// Where the scanner is inside `<!DOCTYPE …>`.
    private enum DoctypePhase: Sendable {
        case beforeSubset, subsetBetween, subsetMarkupStart, subsetDeclaration, subsetComment
        case subsetProcessingInstruction, subsetParameterReference, afterSubset
    }

    private var mode = Mode.content
    private var doctypePhase = DoctypePhase.beforeSubset
    /// The quote that opened the attribute value (or DTD literal) being scanned; 0 outside quotes.
    private var quote: UInt8 = 0
    /// The part of a tag (after its `<`) that arrived in earlier chunks.
    private var tagBuffer: [UInt8] = []
    /// The bytes after `<!` (or after `<` inside the DTD subset) until they say what they open.
    private var markupPrefix: [UInt8] = []
    /// Consecutive `-` (comment), `]` (CDATA) or `?` (processing instruction) just seen, to find the terminator.
    private var run = 0
    /// The names of the open elements, concatenated; `nameEnds` marks where each ends.
    private var names: [UInt8] = []
    private var nameEnds: [Int] = []
    private var sawRoot = false
    private var rootClosed = false
    private var sawDoctype = false
    /// Bytes fed before the current chunk.
    private var offset = 0
    /// Where the current markup's `<` is in the file, for error messages that do not depend on how it was split.
    private var markupStart = 0
    /// The first error; the parser refuses everything after it.
    private var failure: AppleHealthImportError?
    private var skippedCounts: [AppleHealthSkip: Int] = [:]
    /// Records are grouped by type in exports, so runs of the same skipped identifier are counted before building a String.
    private var pendingSkip: [UInt8] = []
    private var pendingSkipReason = AppleHealthSkipReason.unsupportedType
    private var pendingSkipCount = 0
    /// The line of the current markup's `<`.
    private var markupLine = 1
    /// The last HKTimeZone value looked at, valid or not, so that the same value is validated once per run.
    private var lastTimeZoneCandidate: [UInt8] = []
    /// Samples starting after this are invalid (a clock set wrong, or a made-up file).
    private let notAfter: Double
    private let table = AppleHealthRecordTable()

    /// `now`: what "in the future" is judged against (with `SampleBatch.allowedClockSkew`, as for uploads).
    package init(now: Date = Date()) {
        notAfter = now.addingTimeInterval(SampleBatch.allowedClockSkew).timeIntervalSince1970
    }

    /// Feeds the next chunk of the file (split anywhere, even inside a tag or a UTF-8 sequence) and returns the samples
    /// completed by it.
    package mutating func feed(_ bytes: some Collection<UInt8>) throws(AppleHealthImportError) -> [Sample] {
        if let failure { throw failure }
        var samples: [Sample] = []
        var result: Result<Void, AppleHealthImportError> = .success(())
        let contiguous: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            result = Result { () throws(AppleHealthImportError) in try scan(buffer, into: &samples) }
        }
        if contiguous == nil {
            let copy = Array(bytes)
            copy.withUnsafeBufferPointer { buffer in
                result = Result { () throws(AppleHealthImportError) in try scan(buffer, into: &samples) }
            }
        }
        if case .failure(let error) = result {
            failure = error
            throw error
        }
        return samples
    }

    /// Ends the input: throws `.notAppleHealth` if no `<HealthData>` root was seen, `.truncated` unless it was closed.
    package mutating func finish() throws(AppleHealthImportError) {
        if let failure { throw failure }
        let error: AppleHealthImportError?
        if !sawRoot {
            error = offset == 0 ? .empty : mode == .content ? .notAppleHealth : .truncated
        } else if !rootClosed || mode != .content {
            error = .truncated
        } else {
            error = nil
        }
        if let error {
            failure = error
            throw error
        }
    }

    // MARK: - Scanning

    private mutating func scan(_ buf: UnsafeBufferPointer<UInt8>, into out: inout [Sample]) throws(AppleHealthImportError) {
        let n = buf.count
        var i = 0
        // Newlines are counted up to each `<` found in content (and to the end of the chunk), so every byte once.
        var counted = 0
        defer { countLines(buf, from: counted, to: n) }
        while i < n {
            switch mode {
            case .content:
                var j = i
                if nameEnds.isEmpty {
                    // Outside the root only whitespace (and a leading byte order mark) may appear.
                    while j < n, buf[j] != .lessThan {
                        if !buf[j].isXMLWhitespace && !isByteOrderMark(buf[j], at: offset + j) {
                            // UTF-16 and UTF-32 start with a byte-order mark (FE FF, FF FE) or a NUL byte: this
                            // scanner reads UTF-8 only, so it says so rather than "not XML".
                            if !sawRoot, offset + j < 2, [0x00, 0xFE, 0xFF].contains(buf[j]) { throw .notUTF8 }
                            // The line of this byte, whatever the chunks: count the newlines up to it first.
                            countLines(buf, from: counted, to: j)
                            counted = j
                            throw sawRoot ? .malformed("text after </HealthData> on line \(line)") : .notXML
                        }
                        j += 1
                    }
                } else {
                    while j < n, buf[j] != .lessThan { j += 1 }  // Apple's exports have no text content
                }
                if j < n {
                    mode = .afterLessThan
                    markupStart = offset + j
                    countLines(buf, from: counted, to: j)
                    counted = j
                    markupLine = line
                    i = j + 1
                } else {
                    i = n
                }
            case .afterLessThan:
                switch buf[i] {
                case 0x00:
                    // `<` then NUL: UTF-16 (little-endian) without a byte-order mark.
                    throw .notUTF8
                case .question:
                    mode = .processingInstruction
                    run = 0
                    i += 1
                case .exclamation:
                    mode = .bang
                    markupPrefix.removeAll(keepingCapacity: true)
                    i += 1
                default:
                    mode = .tag
                    quote = 0
                }
            case .tag:
                i = try scanTag(buf, from: i, into: &out)
            case .bang:
                markupPrefix.append(buf[i])
                i += 1
                try classifyBang()
            case .comment:
                i = skipSection(buf, from: i, closedBy: .hyphen)
            case .processingInstruction:
                var j = i
                while j < n {
                    let b = buf[j]
                    if b == .greaterThan && run == 1 { break }
                    run = b == .question ? 1 : 0
                    j += 1
                }
                if j < n { mode = .content }
                i = min(j + 1, n)
            case .cdata:
                i = skipSection(buf, from: i, closedBy: .closingBracket)
            case .doctype:
                i = try scanDoctype(buf, from: i)
            }
        }
        offset += n
    }

    /// Adds the newlines of `buf[from..<to]` to `line` (memchr: far faster than a loop over bytes in a debug build).
    private mutating func countLines(_ buf: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) {
        guard start < end, let base = buf.baseAddress else { return }
        var p = base + start
        let stop = base + end
        while p < stop, let found = memchr(p, 0x0A, stop - p) {
            line += 1
            p = UnsafePointer(found.assumingMemoryBound(to: UInt8.self)) + 1
        }
    }

    /// Skips a comment (`-->`) or CDATA section (`]]>`): up to a `>` after at least two `repeated` bytes.
    /// `run` counts those bytes across chunk boundaries. Returns where scanning goes on.
    private mutating func skipSection(_ buf: UnsafeBufferPointer<UInt8>, from start: Int, closedBy repeated: UInt8) -> Int {
        let n = buf.count
        var j = start
        while j < n {
            let b = buf[j]
            if b == repeated {
                run += 1
            } else if b == .greaterThan && run >= 2 {
                break
            } else {
                run = 0
            }
            j += 1
        }
        if j < n { mode = .content }
        return min(j + 1, n)
    }

    private func isByteOrderMark(_ byte: UInt8, at position: Int) -> Bool {
        position < 3 && byte == [0xEF, 0xBB, 0xBF][position]
    }

    /// After `<!`: a comment, CDATA section or DOCTYPE; anything else is not XML we accept.
    private mutating func classifyBang() throws(AppleHealthImportError) {
        if markupPrefix.elementsEqual(Markup.comment) {
            mode = .comment
            run = 0
        } else if markupPrefix.elementsEqual(Markup.cdata) {
            guard !nameEnds.isEmpty else { throw .malformed("CDATA outside the root element on line \(markupLine)") }
            mode = .cdata
            run = 0
        } else if markupPrefix.elementsEqual(Markup.doctype) {
            guard !sawRoot, !sawDoctype else { throw .malformed("a DOCTYPE after the start of the document") }
            sawDoctype = true
            mode = .doctype
            doctypePhase = .beforeSubset
            quote = 0
        } else if !(Markup.comment.starts(with: markupPrefix) || Markup.cdata.starts(with: markupPrefix)
            || Markup.doctype.starts(with: markupPrefix))
        {
            throw sawRoot ? .malformed("unexpected <!\(String(decoding: markupPrefix, as: UTF8.self))") : .notAppleHealth
        }
    }

    /// Scans to the `>` that ends a start or end tag (a `>` inside a quoted attribute value does not end it).
    private mutating func scanTag(
        _ buf: UnsafeBufferPointer<UInt8>, from start: Int, into out: inout [Sample]
    ) throws(AppleHealthImportError) -> Int {
        let n = buf.count
        var j = start
        var q = quote
        while j < n {
            let b = buf[j]
            if q != 0 {
                if b == q { q = 0 }
            } else if b == .greaterThan {
                break
            } else if b == .doubleQuote || b == .singleQuote {
                q = b
            }
            j += 1
        }
        guard tagBuffer.count + (j - start) <= Self.maximumTagBytes else {
            throw .malformed("the tag on line \(markupLine) is longer than \(Self.maximumTagBytes) bytes")
        }
        if j == n {
            tagBuffer.append(contentsOf: UnsafeBufferPointer(rebasing: buf[start..<n]))
            quote = q
            return n
        }
        mode = .content
        quote = 0
        if tagBuffer.isEmpty {
            try handleTag(UnsafeBufferPointer(rebasing: buf[start..<j]), into: &out)
        } else {
            tagBuffer.append(contentsOf: UnsafeBufferPointer(rebasing: buf[start..<j]))
            // Swapped out (not copied) so that handleTag may mutate self while reading it; the capacity is kept.
            var whole: [UInt8] = []
            swap(&whole, &tagBuffer)
            defer {
                whole.removeAll(keepingCapacity: true)
                swap(&whole, &tagBuffer)
            }
            var result: Result<Void, AppleHealthImportError> = .success(())
            whole.withUnsafeBufferPointer { tag in
                result = Result { () throws(AppleHealthImportError) in try handleTag(tag, into: &out) }
            }
            try result.get()
        }
        return j + 1
    }

    /// Skips `<!DOCTYPE …>` without interpreting it, refusing any entity declaration in the internal subset.
    private mutating func scanDoctype(_ buf: UnsafeBufferPointer<UInt8>, from start: Int) throws(AppleHealthImportError) -> Int {
        var j = start
        while j < buf.count {
            let b = buf[j]
            switch doctypePhase {
            case .beforeSubset:
                if quote != 0 {
                    if b == quote { quote = 0 }
                } else if b == .doubleQuote || b == .singleQuote {
                    quote = b
                } else if b == .openingBracket {
                    doctypePhase = .subsetBetween
                } else if b == .greaterThan {
                    mode = .content
                    return j + 1
                }
            case .subsetBetween:
                if b == .lessThan {
                    doctypePhase = .subsetMarkupStart
                    markupPrefix.removeAll(keepingCapacity: true)
                } else if b == .percent {
                    doctypePhase = .subsetParameterReference
                } else if b == .closingBracket {
                    doctypePhase = .afterSubset
                } else if !b.isXMLWhitespace {
                    throw .malformed("unexpected character in the DOCTYPE at byte \(offset + j)")
                }
            case .subsetMarkupStart:
                markupPrefix.append(b)
                if markupPrefix.elementsEqual(Markup.entityDeclaration) {
                    throw .entityDeclarationsNotAllowed
                } else if markupPrefix.elementsEqual(Markup.subsetComment) {
                    doctypePhase = .subsetComment
                    run = 0
                } else if markupPrefix.count == 1 && b == .question {
                    doctypePhase = .subsetProcessingInstruction
                    run = 0
                } else if Markup.entityDeclaration.starts(with: markupPrefix) || Markup.subsetComment.starts(with: markupPrefix) {
                    break  // not yet known
                } else if markupPrefix.count >= 2, markupPrefix[0] == .exclamation, markupPrefix[1].isASCIILetter {
                    // <!ELEMENT, <!ATTLIST, <!NOTATION: skipped to their '>'; the byte that told us may be a quote or '>'.
                    doctypePhase = .subsetDeclaration
                    quote = 0
                    if b == .doubleQuote || b == .singleQuote {
                        quote = b
                    } else if b == .greaterThan {
                        doctypePhase = .subsetBetween
                    }
                } else {
                    throw .malformed("unexpected markup in the DOCTYPE at byte \(offset + j)")
                }
            case .subsetDeclaration:
                if quote != 0 {
                    if b == quote { quote = 0 }
                } else if b == .doubleQuote || b == .singleQuote {
                    quote = b
                } else if b == .greaterThan {
                    doctypePhase = .subsetBetween
                }
            case .subsetComment:
                if b == .hyphen {
                    run += 1
                } else if b == .greaterThan && run >= 2 {
                    doctypePhase = .subsetBetween
                } else {
                    run = 0
                }
            case .subsetProcessingInstruction:
                if b == .greaterThan && run == 1 {
                    doctypePhase = .subsetBetween
                } else {
                    run = b == .question ? 1 : 0
                }
            case .subsetParameterReference:
                // Nothing can define it (entity declarations are refused) and nothing is fetched: it is only skipped.
                if b == .semicolon {
                    doctypePhase = .subsetBetween
                } else if !b.isXMLNameByte {
                    throw .malformed("a bad parameter-entity reference in the DOCTYPE at byte \(offset + j)")
                }
            case .afterSubset:
                if b == .greaterThan {
                    mode = .content
                    return j + 1
                } else if !b.isXMLWhitespace {
                    throw .malformed("unexpected character after the DOCTYPE's internal subset at byte \(offset + j)")
                }
            }
            j += 1
        }
        return j
    }

    // MARK: - Elements

    /// A complete tag without its `<` and `>`.
    private mutating func handleTag(_ tag: UnsafeBufferPointer<UInt8>, into out: inout [Sample]) throws(AppleHealthImportError) {
        guard let first = tag.first else { throw .malformed("an empty tag <> on line \(markupLine)") }
        if first == .slash {
            try handleEndTag(UnsafeBufferPointer(rebasing: tag[1...]))
            return
        }
        let selfClosing = tag[tag.count - 1] == .slash
        let end = selfClosing ? tag.count - 1 : tag.count
        var k = 0
        while k < end, !tag[k].isXMLWhitespace { k += 1 }
        guard first.isXMLNameStartByte else {
            throw sawRoot ? .malformed("a bad element name on line \(markupLine)") : .notAppleHealth
        }
        guard k <= Self.maximumNameBytes else { throw .malformed("an element name over \(Self.maximumNameBytes) bytes on line \(markupLine)") }
        let name = UnsafeBufferPointer(rebasing: tag[0..<k])
        if nameEnds.isEmpty {
            if rootClosed { throw .malformed("an element after </HealthData>") }
            guard AppleHealthBytes.equal(Markup.healthData, name) else { throw .notAppleHealth }
            sawRoot = true
        }
        if AppleHealthBytes.equal(Markup.record, name) {
            let attributes = try parseAttributes(tag, from: k, to: end, capture: true)
            Self.withDecodedValues(tag, attributes) { tag, attributes in mapRecord(tag, attributes, into: &out) }
        } else if AppleHealthBytes.equal(Markup.correlation, name) {
            let attributes = try parseAttributes(tag, from: k, to: end, capture: true)
            Self.withDecodedValues(tag, attributes) { tag, attributes in mapCorrelation(tag, attributes) }
        } else if AppleHealthBytes.equal(Markup.metadataEntry, name) {
            let attributes = try parseAttributes(tag, from: k, to: end, capture: true)
            Self.withDecodedValues(tag, attributes) { tag, attributes in readMetadata(tag, attributes) }
        } else {
            _ = try parseAttributes(tag, from: k, to: end, capture: false)  // checked for well-formedness only
        }
        if selfClosing {
            if nameEnds.isEmpty { rootClosed = true }  // <HealthData/>: an empty export
        } else {
            guard nameEnds.count < Self.maximumDepth else {
                throw .malformed("elements nested deeper than \(Self.maximumDepth) on line \(markupLine)")
            }
            names.append(contentsOf: name)
            nameEnds.append(names.count)
        }
    }

    private mutating func handleEndTag(_ rest: UnsafeBufferPointer<UInt8>) throws(AppleHealthImportError) {
        var end = rest.count
        while end > 0, rest[end - 1].isXMLWhitespace { end -= 1 }
        guard let top = nameEnds.last else { throw .malformed("an end tag without a start tag on line \(markupLine)") }
        let start = nameEnds.count >= 2 ? nameEnds[nameEnds.count - 2] : 0
        let closing = UnsafeBufferPointer(rebasing: rest[0..<end])
        guard names[start..<top].elementsEqual(closing) else {
            let opened = String(decoding: names[start..<top], as: UTF8.self)
            throw .malformed("</\(String(decoding: closing, as: UTF8.self))> on line \(markupLine) closes <\(opened)>")
        }
        names.removeLast(top - start)
        nameEnds.removeLast()
        if nameEnds.isEmpty { rootClosed = true }
    }

    /// The attribute values that matter, as ranges of the tag.
    private struct RecordAttributes {
        var type: Range<Int>?
        var unit: Range<Int>?
        var value: Range<Int>?
        var startDate: Range<Int>?
        var endDate: Range<Int>?
        var key: Range<Int>?
        var sourceName: Range<Int>?
        var device: Range<Int>?
        /// One of the captured values contains an entity or character reference and must be decoded.
        var needsDecoding = false

        mutating func decode(in tag: inout [UInt8]) {
            type = type.map { decodeReferences(in: &tag, $0) }
            unit = unit.map { decodeReferences(in: &tag, $0) }
            value = value.map { decodeReferences(in: &tag, $0) }
            startDate = startDate.map { decodeReferences(in: &tag, $0) }
            endDate = endDate.map { decodeReferences(in: &tag, $0) }
            key = key.map { decodeReferences(in: &tag, $0) }
            sourceName = sourceName.map { decodeReferences(in: &tag, $0) }
            device = device.map { decodeReferences(in: &tag, $0) }
            needsDecoding = false
        }
    }

    /// Parses `name="value"` pairs, checking every reference; with `capture`, records where the values that matter are.
    private func parseAttributes(
        _ tag: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, capture: Bool
    ) throws(AppleHealthImportError) -> RecordAttributes {
        var attributes = RecordAttributes()
        var k = start
        while true {
            while k < end, tag[k].isXMLWhitespace { k += 1 }
            if k >= end { break }
            let nameStart = k
            while k < end, tag[k] != .equals, !tag[k].isXMLWhitespace { k += 1 }
            let nameEnd = k
            while k < end, tag[k].isXMLWhitespace { k += 1 }
            guard nameEnd > nameStart, k < end, tag[k] == .equals else {
                throw .malformed("an attribute without a value in the tag on line \(markupLine)")
            }
            k += 1
            while k < end, tag[k].isXMLWhitespace { k += 1 }
            guard k < end, tag[k] == .doubleQuote || tag[k] == .singleQuote else {
                throw .malformed("an unquoted attribute value in the tag on line \(markupLine)")
            }
            let q = tag[k]
            k += 1
            let valueStart = k
            var hasReference = false
            while k < end, tag[k] != q {
                if tag[k] == .ampersand { hasReference = true }
                k += 1
            }
            guard k < end else { throw .malformed("an unterminated attribute value in the tag on line \(markupLine)") }
            let value = valueStart..<k
            k += 1
            guard k == end || tag[k].isXMLWhitespace else {
                throw .malformed("attributes not separated by whitespace in the tag on line \(markupLine)")
            }
            if hasReference { try checkReferences(tag, value) }
            guard capture else { continue }
            let name = UnsafeBufferPointer(rebasing: tag[nameStart..<nameEnd])
            let captured: Bool
            switch name.count {
            case 3 where AppleHealthBytes.equal(Markup.key, name):
                attributes.key = value
                captured = true
            case 4 where AppleHealthBytes.equal(Markup.type, name):
                attributes.type = value
                captured = true
            case 4 where AppleHealthBytes.equal(Markup.unit, name):
                attributes.unit = value
                captured = true
            case 5 where AppleHealthBytes.equal(Markup.value, name):
                attributes.value = value
                captured = true
            case 9 where AppleHealthBytes.equal(Markup.startDate, name):
                attributes.startDate = value
                captured = true
            case 7 where AppleHealthBytes.equal(Markup.endDate, name):
                attributes.endDate = value
                captured = true
            case 10 where AppleHealthBytes.equal(Markup.sourceName, name):
                attributes.sourceName = value
                captured = true
            case 6 where AppleHealthBytes.equal(Markup.device, name):
                attributes.device = value
                captured = true
            default: captured = false
            }
            if captured && hasReference { attributes.needsDecoding = true }
        }
        return attributes
    }

    /// Only the five predefined entities and character references exist here: nothing is ever expanded.
    private func checkReferences(_ tag: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(AppleHealthImportError) {
        var k = range.lowerBound
        while k < range.upperBound {
            if tag[k] == .ampersand {
                var semicolon = k + 1
                while semicolon < range.upperBound, semicolon - k <= 12, tag[semicolon] != .semicolon { semicolon += 1 }
                guard semicolon < range.upperBound, tag[semicolon] == .semicolon,
                    resolveReference(UnsafeBufferPointer(rebasing: tag[k + 1..<semicolon])) != nil
                else {
                    let shown = String(decoding: tag[k..<min(range.upperBound, k + 14)], as: UTF8.self)
                    throw .malformed("an undefined or bad entity reference \(shown) in the tag on line \(markupLine)")
                }
                k = semicolon
            }
            k += 1
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

    private mutating func mapRecord(_ tag: UnsafeBufferPointer<UInt8>, _ a: RecordAttributes, into out: inout [Sample]) {
        recordsSeen += 1
        func slice(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: tag[range]) }
        guard let typeRange = a.type else {
            skip(.unsupportedType, Markup.recordWithoutType[...])
            return
        }
        let identifier = slice(typeRange)
        guard let type = table.type(identifier) else {
            skip(.unsupportedType, identifier)
            return
        }
        guard let startRange = a.startDate else {
            invalid(identifier, "it has no startDate")
            return
        }
        guard let start = AppleHealthDate.secondsSince1970(slice(startRange)) else {
            invalid(identifier, "its startDate \(Self.quoted(slice(startRange))) is not a date and time with a UTC offset")
            return
        }
        let value: Double
        switch type {
        case .standHour:
            guard let valueRange = a.value else {
                invalid(identifier, "it has no value")
                return
            }
            if AppleHealthBytes.equal(table.stood, slice(valueRange)) {
                value = 1
            } else if AppleHealthBytes.equal(table.idle, slice(valueRange)) {
                skip(.notStood, identifier)
                return
            } else {
                invalid(identifier, "its value \(Self.quoted(slice(valueRange))) is not a stand hour value")
                return
            }
        case .sleepAnalysis:
            guard let valueRange = a.value else {
                invalid(identifier, "it has no value")
                return
            }
            let category = slice(valueRange)
            if AppleHealthBytes.hasPrefix(category, table.asleepPrefix) {
                guard let endRange = a.endDate else {
                    invalid(identifier, "it has no endDate")
                    return
                }
                guard let end = AppleHealthDate.secondsSince1970(slice(endRange)) else {
                    invalid(identifier, "its endDate \(Self.quoted(slice(endRange))) is not a date and time with a UTC offset")
                    return
                }
                guard end >= start else {
                    invalid(identifier, "it ends before it starts")
                    return
                }
                value = (end - start) / 3600
            } else if AppleHealthBytes.equal(table.inBed, category) || AppleHealthBytes.equal(table.awake, category) {
                skip(.notAsleep, identifier)
                return
            } else {
                invalid(identifier, "its value \(Self.quoted(category)) is not a sleep analysis value")
                return
            }
        default:
            guard let valueRange = a.value else {
                invalid(identifier, "it has no value")
                return
            }
            guard let number = AppleHealthNumber.parse(slice(valueRange)), number.isFinite else {
                invalid(identifier, "its value \(Self.quoted(slice(valueRange))) is not a number")
                return
            }
            guard let unitRange = a.unit else {
                invalid(identifier, "it has no unit")
                return
            }
            guard let converted = table.convert(number, type, unit: slice(unitRange)) else {
                invalid(identifier, "its unit \(Self.quoted(slice(unitRange))) is not one Data4Help converts")
                return
            }
            value = converted
        }
        let sampleType = type.sampleType
        guard value.isFinite, sampleType.range.contains(value) else {
            invalid(
                identifier,
                """
                \(Self.format(value)) \(sampleType.unit) is out of range \
                (\(Self.format(sampleType.range.lowerBound))–\(Self.format(sampleType.range.upperBound)) \(sampleType.unit))
                """)
            return
        }
        guard start <= notAfter else {
            invalid(identifier, "it starts in the future (\(Self.quoted(slice(startRange))))")
            return
        }
        if separatesSources, sampleType.aggregation == .dailyTotal {
            // Sleep's end is its start plus its length; a quantity's is its endDate when that is usable.
            var end = start
            if type == .sleepAnalysis {
                end = start + value * 3600
            } else if let endRange = a.endDate, let parsed = AppleHealthDate.secondsSince1970(slice(endRange)), parsed >= start {
                end = parsed
            }
            sourcedRecords.append(
                AppleHealthSourcedRecord(
                    type: sampleType, value: value, start: start, end: end, source: sourceID(tag, a)))
            return
        }
        out.append(Sample(type: sampleType, value: value, at: Date(timeIntervalSince1970: start)))
    }

    /// The index of the record's source, registering it on first sight: the kind from the `device` description
    /// (`model:Watch`, `model:iPhone`), else from words in the source's name.
    private mutating func sourceID(_ tag: UnsafeBufferPointer<UInt8>, _ a: RecordAttributes) -> Int32 {
        let name = a.sourceName.map { Array(tag[$0]) } ?? []
        if let id = sourceIDs[name] { return id }
        guard sources.count < Self.maximumSources else { return Int32(sources.count - 1) }
        func contains(_ range: Range<Int>?, _ word: [UInt8]) -> Bool {
            guard let range, range.count >= word.count else { return false }
            return (range.lowerBound...(range.upperBound - word.count)).contains { start in
                AppleHealthBytes.equal(word, UnsafeBufferPointer(rebasing: tag[start..<start + word.count]))
            }
        }
        let kind: AppleHealthSource.Kind =
            contains(a.device, Markup.watchModel)
            ? .watch
            : contains(a.device, Markup.phoneModel)
                ? .phone
                : contains(a.sourceName, Markup.watchWord)
                    ? .watch
                    : contains(a.sourceName, Markup.phoneWord) ? .phone : .other
        let id = Int32(sources.count)
        sources.append(AppleHealthSource(name: String(decoding: name, as: UTF8.self), kind: kind))
        sourceIDs[name] = id
        return id
    }

    /// A blood-pressure correlation's samples come from its child records; other correlations (food) are skipped.
    private mutating func mapCorrelation(_ tag: UnsafeBufferPointer<UInt8>, _ a: RecordAttributes) {
        guard let typeRange = a.type else {
            skip(.unsupportedType, Markup.correlationWithoutType[...])
            return
        }
        let identifier = UnsafeBufferPointer(rebasing: tag[typeRange])
        if !AppleHealthBytes.equal(table.bloodPressureCorrelation, identifier) { skip(.unsupportedType, identifier) }
    }

    /// `<MetadataEntry key="HKTimeZone" value="Europe/Rome"/>`: the zone the device was in. Only a value that
    /// looks like an IANA name is given to `TimeZone(identifier:)` (which reads a file by that name), and the
    /// same value is looked at once per run of them (every sleep record carries one).
    private mutating func readMetadata(_ tag: UnsafeBufferPointer<UInt8>, _ a: RecordAttributes) {
        guard let keyRange = a.key, let valueRange = a.value,
            AppleHealthBytes.equal(Markup.timeZoneKey, UnsafeBufferPointer(rebasing: tag[keyRange]))
        else { return }
        let value = UnsafeBufferPointer(rebasing: tag[valueRange])
        guard value.count <= Self.maximumTimeZoneBytes else { return }
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
        guard invalidExamples.count < Self.maximumInvalidExamples else { return }
        invalidExamples.append(
            AppleHealthInvalidRecord(
                line: markupLine, identifier: String(decoding: identifier.prefix(200), as: UTF8.self), reason: reason()))
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
        return skippedCounts[key] != nil || skippedCounts.count < Self.maximumSkippedIdentifiers
            ? key : AppleHealthSkip(reason: pendingSkipReason, identifier: Self.otherIdentifiers)
    }

    private mutating func flushPendingSkip() {
        guard pendingSkipCount > 0 else { return }
        skippedCounts[pendingSkipKey(), default: 0] += pendingSkipCount
        pendingSkipCount = 0
    }
}

/// The markup and names the scanner recognises, as bytes.
private enum Markup {
    static let comment = Array("--".utf8)
    static let cdata = Array("[CDATA[".utf8)
    static let doctype = Array("DOCTYPE".utf8)
    static let entityDeclaration = Array("!ENTITY".utf8)
    static let subsetComment = Array("!--".utf8)
    static let healthData = Array("HealthData".utf8)
    static let record = Array("Record".utf8)
    static let correlation = Array("Correlation".utf8)
    static let metadataEntry = Array("MetadataEntry".utf8)
    static let key = Array("key".utf8)
    static let timeZoneKey = Array("HKTimeZone".utf8)
    static let type = Array("type".utf8)
    static let unit = Array("unit".utf8)
    static let value = Array("value".utf8)
    static let startDate = Array("startDate".utf8)
    static let endDate = Array("endDate".utf8)
    static let sourceName = Array("sourceName".utf8)
    static let device = Array("device".utf8)
    static let watchModel = Array("model:Watch".utf8)
    static let phoneModel = Array("model:iPhone".utf8)
    static let watchWord = Array("Watch".utf8)
    static let phoneWord = Array("iPhone".utf8)
    static let recordWithoutType = Array("(Record without type)".utf8)
    static let correlationWithoutType = Array("(Correlation without type)".utf8)
}

/// The code point of a reference's body (`amp`, `#38`, `#x26`), or nil if it is not predefined or not a valid character.
private func resolveReference(_ body: UnsafeBufferPointer<UInt8>) -> UInt32? {
    switch String(decoding: body, as: UTF8.self) {
    case "lt": return 0x3C
    case "gt": return 0x3E
    case "amp": return 0x26
    case "quot": return 0x22
    case "apos": return 0x27
    default: break
    }
    guard body.count >= 2, body[0] == UInt8(ascii: "#") else { return nil }
    let hex = body[1] == UInt8(ascii: "x")
    let digits = body[(hex ? 2 : 1)...]
    guard !digits.isEmpty, digits.count <= 8,
        let code = UInt32(String(decoding: digits, as: UTF8.self), radix: hex ? 16 : 10),
        code == 0x9 || code == 0xA || code == 0xD || (0x20...0xD7FF).contains(code)
            || (0xE000...0xFFFD).contains(code) || (0x10000...0x10FFFF).contains(code)
    else { return nil }
    return code
}

/// Decodes the (already checked) references of `range` in place; the decoded text is never longer than the encoded.
private func decodeReferences(in tag: inout [UInt8], _ range: Range<Int>) -> Range<Int> {
    var read = range.lowerBound
    var write = range.lowerBound
    while read < range.upperBound {
        guard tag[read] == .ampersand,
            let semicolon = tag[read..<range.upperBound].firstIndex(of: .semicolon),
            let code = tag.withUnsafeBufferPointer({ resolveReference(UnsafeBufferPointer(rebasing: $0[read + 1..<semicolon])) }),
            let scalar = Unicode.Scalar(code)
        else {
            tag[write] = tag[read]
            read += 1
            write += 1
            continue
        }
        for byte in UTF8.encode(scalar)! {
            tag[write] = byte
            write += 1
        }
        read = semicolon + 1
    }
    return range.lowerBound..<write
}

extension UInt8 {
    fileprivate static let lessThan = UInt8(ascii: "<")
    fileprivate static let greaterThan = UInt8(ascii: ">")
    fileprivate static let question = UInt8(ascii: "?")
    fileprivate static let exclamation = UInt8(ascii: "!")
    fileprivate static let slash = UInt8(ascii: "/")
    fileprivate static let hyphen = UInt8(ascii: "-")
    fileprivate static let equals = UInt8(ascii: "=")
    fileprivate static let doubleQuote = UInt8(ascii: "\"")
    fileprivate static let singleQuote = UInt8(ascii: "'")
    fileprivate static let ampersand = UInt8(ascii: "&")
    fileprivate static let semicolon = UInt8(ascii: ";")
    fileprivate static let percent = UInt8(ascii: "%")
    fileprivate static let openingBracket = UInt8(ascii: "[")
    fileprivate static let closingBracket = UInt8(ascii: "]")

    fileprivate var isXMLWhitespace: Bool { self == 0x20 || self == 0x0A || self == 0x09 || self == 0x0D }
    fileprivate var isASCIILetter: Bool { (self | 0x20) &- UInt8(ascii: "a") < 26 }
    fileprivate var isXMLNameStartByte: Bool { isASCIILetter || self == UInt8(ascii: "_") || self == UInt8(ascii: ":") || self >= 0x80 }
    fileprivate var isXMLNameByte: Bool {
        isXMLNameStartByte || self &- UInt8(ascii: "0") < 10 || self == .hyphen || self == UInt8(ascii: ".")
    }
}
