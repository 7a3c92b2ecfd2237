import Foundation

/// A hand-written, incremental XML scanner over UTF-8 bytes: accepts the document in chunks split anywhere and
/// holds at most one chunk plus one tag, whatever the document's size. It checks well-formedness (names, nesting,
/// quoting, references, the one root element named `rootElement`) and tells its handler the start tags and their
/// attributes; it knows nothing of what the document means.
///
/// Foundation's XMLParser is not used: its entity handling and memory behaviour are not under our control. This
/// scanner never expands an entity: the DOCTYPE is skipped uninterpreted (a DOCTYPE declaring entities is refused,
/// which is how billion laughs is stopped), and attribute values may only use the five predefined entities and
/// character references (`XMLReferences`). Text content is skipped unread.
///
/// After an error the scanner's state is undefined: its owner stops feeding it.
struct XMLByteScanner {
    /// Newlines before the byte the scanner has reached, plus one: the line being read.
    private(set) var line = 1

    /// Where the scanner is, between two bytes.
    private enum Mode: Sendable {
        case content, afterLessThan, tag, bang, comment, processingInstruction, cdata, doctype
    }

    /// Where the scanner is inside `<!DOCTYPE …>`.
    private enum DoctypePhase: Sendable {
        case beforeSubset, subsetBetween, subsetMarkupStart, subsetDeclaration, subsetComment
        case subsetProcessingInstruction, subsetParameterReference, afterSubset
    }

    /// How a skipped section ends: `-->` and `]]>` with a `>` after two or more of a byte, `?>` after one `?`.
    private enum SectionEnd {
        case twice(UInt8)
        case questionMark
    }

    private let rootElement: [UInt8]
    /// The root element's name as messages show it.
    private let rootName: String
    private let maximumTagBytes: Int
    private let maximumDepth: Int
    private let maximumNameBytes: Int

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
    /// The line of the current markup's `<`.
    private var markupLine = 1

    /// `rootElement`: the name the document's root element must have. The limits bound what one tag may hold
    /// (with its attributes), how deep elements nest, and how long a name is (open elements' names are kept
    /// until they close).
    init(rootElement: String, maximumTagBytes: Int, maximumDepth: Int, maximumNameBytes: Int) {
        self.rootElement = Array(rootElement.utf8)
        rootName = rootElement
        self.maximumTagBytes = maximumTagBytes
        self.maximumDepth = maximumDepth
        self.maximumNameBytes = maximumNameBytes
    }

    /// Ends the input: throws `.wrongRoot` if no root element was seen, `.truncated` unless it was closed.
    func finish() throws(XMLScanError) {
        if !sawRoot { throw offset == 0 ? .empty : mode == .content ? .wrongRoot : .truncated }
        if !rootClosed || mode != .content { throw .truncated }
    }

    // MARK: - Scanning

    /// Scans the next chunk of the document (split anywhere, even inside a tag or a UTF-8 sequence), telling
    /// `handler` the start tags it completes.
    mutating func scan<Handler: XMLStartTagHandler>(_ buf: UnsafeBufferPointer<UInt8>, _ handler: inout Handler) throws(XMLScanError) {
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
                            throw sawRoot ? .malformed("text after </\(rootName)> on line \(line)") : .notXML
                        }
                        j += 1
                    }
                } else {
                    while j < n, buf[j] != .lessThan { j += 1 }  // text content is skipped unread
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
                i = try scanTag(buf, from: i, &handler)
            case .bang:
                markupPrefix.append(buf[i])
                i += 1
                try classifyBang()
            case .comment:
                i = skipSection(buf, from: i, endedBy: .twice(.hyphen))
            case .processingInstruction:
                i = skipSection(buf, from: i, endedBy: .questionMark)
            case .cdata:
                i = skipSection(buf, from: i, endedBy: .twice(.closingBracket))
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

    /// Whether `b` is the `>` that ends a section, counting in `run` the bytes before it across chunk boundaries.
    @inline(__always)
    private mutating func ends(_ end: SectionEnd, at b: UInt8) -> Bool {
        switch end {
        case .twice(let repeated):
            if b == repeated {
                run += 1
            } else if b == .greaterThan && run >= 2 {
                return true
            } else {
                run = 0
            }
        case .questionMark:
            if b == .greaterThan && run == 1 { return true }
            run = b == .question ? 1 : 0
        }
        return false
    }

    /// Skips a comment (`-->`), CDATA section (`]]>`) or processing instruction (`?>`). Returns where scanning goes on.
    private mutating func skipSection(_ buf: UnsafeBufferPointer<UInt8>, from start: Int, endedBy end: SectionEnd) -> Int {
        let n = buf.count
        var j = start
        while j < n, !ends(end, at: buf[j]) { j += 1 }
        if j < n { mode = .content }
        return min(j + 1, n)
    }

    /// Whether `b` is inside a quoted literal, or opens or closes one (so that it ends nothing), tracking `quote`.
    @inline(__always)
    private mutating func isQuoted(_ b: UInt8) -> Bool {
        if quote != 0 {
            if b == quote { quote = 0 }
            return true
        }
        if b == .doubleQuote || b == .singleQuote {
            quote = b
            return true
        }
        return false
    }

    private func isByteOrderMark(_ byte: UInt8, at position: Int) -> Bool {
        position < 3 && byte == [0xEF, 0xBB, 0xBF][position]
    }

    /// After `<!`: a comment, CDATA section or DOCTYPE; anything else is not XML we accept.
    private mutating func classifyBang() throws(XMLScanError) {
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
            throw sawRoot ? .malformed("unexpected <!\(String(decoding: markupPrefix, as: UTF8.self))") : .wrongRoot
        }
    }

    /// Scans to the `>` that ends a start or end tag (a `>` inside a quoted attribute value does not end it).
    private mutating func scanTag<Handler: XMLStartTagHandler>(
        _ buf: UnsafeBufferPointer<UInt8>, from start: Int, _ handler: inout Handler
    ) throws(XMLScanError) -> Int {
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
        guard tagBuffer.count + (j - start) <= maximumTagBytes else {
            throw .malformed("the tag on line \(markupLine) is longer than \(maximumTagBytes) bytes")
        }
        if j == n {
            tagBuffer.append(contentsOf: UnsafeBufferPointer(rebasing: buf[start..<n]))
            quote = q
            return n
        }
        mode = .content
        quote = 0
        if tagBuffer.isEmpty {
            try handleTag(UnsafeBufferPointer(rebasing: buf[start..<j]), &handler)
        } else {
            tagBuffer.append(contentsOf: UnsafeBufferPointer(rebasing: buf[start..<j]))
            // Swapped out (not copied) so that handleTag may mutate self while reading it; the capacity is kept.
            var whole: [UInt8] = []
            swap(&whole, &tagBuffer)
            defer {
                whole.removeAll(keepingCapacity: true)
                swap(&whole, &tagBuffer)
            }
            var result: Result<Void, XMLScanError> = .success(())
            whole.withUnsafeBufferPointer { tag in
                result = Result { () throws(XMLScanError) in try handleTag(tag, &handler) }
            }
            try result.get()
        }
        return j + 1
    }

    /// Skips `<!DOCTYPE …>` without interpreting it, refusing any entity declaration in the internal subset.
    private mutating func scanDoctype(_ buf: UnsafeBufferPointer<UInt8>, from start: Int) throws(XMLScanError) -> Int {
        var j = start
        while j < buf.count {
            let b = buf[j]
            switch doctypePhase {
            case .beforeSubset:
                if isQuoted(b) {
                    // a literal (the external ID's): nothing in it ends the DOCTYPE
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
                    if !isQuoted(b) && b == .greaterThan { doctypePhase = .subsetBetween }
                } else {
                    throw .malformed("unexpected markup in the DOCTYPE at byte \(offset + j)")
                }
            case .subsetDeclaration:
                if !isQuoted(b) && b == .greaterThan { doctypePhase = .subsetBetween }
            case .subsetComment:
                if ends(.twice(.hyphen), at: b) { doctypePhase = .subsetBetween }
            case .subsetProcessingInstruction:
                if ends(.questionMark, at: b) { doctypePhase = .subsetBetween }
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
    private mutating func handleTag<Handler: XMLStartTagHandler>(
        _ tag: UnsafeBufferPointer<UInt8>, _ handler: inout Handler
    ) throws(XMLScanError) {
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
            throw sawRoot ? .malformed("a bad element name on line \(markupLine)") : .wrongRoot
        }
        guard k <= maximumNameBytes else { throw .malformed("an element name over \(maximumNameBytes) bytes on line \(markupLine)") }
        let name = UnsafeBufferPointer(rebasing: tag[0..<k])
        if nameEnds.isEmpty {
            if rootClosed { throw .malformed("an element after </\(rootName)>") }
            guard rootElement.elementsEqual(name) else { throw .wrongRoot }
            sawRoot = true
        }
        let wanted = handler.startTag(name, line: markupLine)
        try parseAttributes(tag, from: k, to: end, telling: &handler, wanted: wanted)
        if wanted { handler.startTagEnded(tag) }
        if selfClosing {
            if nameEnds.isEmpty { rootClosed = true }  // an empty root element: an empty document
        } else {
            guard nameEnds.count < maximumDepth else {
                throw .malformed("elements nested deeper than \(maximumDepth) on line \(markupLine)")
            }
            names.append(contentsOf: name)
            nameEnds.append(names.count)
        }
    }

    private mutating func handleEndTag(_ rest: UnsafeBufferPointer<UInt8>) throws(XMLScanError) {
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

    /// Parses `name="value"` pairs, checking every reference; when `wanted`, tells `handler` each of them.
    private func parseAttributes<Handler: XMLStartTagHandler>(
        _ tag: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, telling handler: inout Handler, wanted: Bool
    ) throws(XMLScanError) {
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
            if hasReference { try XMLReferences.check(tag, value, line: markupLine) }
            if wanted { handler.attribute(UnsafeBufferPointer(rebasing: tag[nameStart..<nameEnd]), value: value, hasReference: hasReference) }
        }
    }
}

/// The markup the scanner recognises after `<!` (and after `<` in the DOCTYPE's internal subset), as bytes.
private enum Markup {
    static let comment = Array("--".utf8)
    static let cdata = Array("[CDATA[".utf8)
    static let doctype = Array("DOCTYPE".utf8)
    static let entityDeclaration = Array("!ENTITY".utf8)
    static let subsetComment = Array("!--".utf8)
}
