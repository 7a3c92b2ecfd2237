import Foundation

/// Writes samples as FHIR R4 Observations (`ObservationCoding` is the table), chunk by chunk, as a `Bundle`
/// of type collection or as NDJSON, one Observation a line. Like `ReleasedSampleEncoder` it is a download's
/// hot loop, so each type's fixed parts (profile, category, code, subject, unit) are encoded once, when
/// the encoder is made, and a sample costs its id, its times and its value.
///
/// Blood pressure: a systolic and a diastolic reading taken at the same instant are written as one panel
/// (LOINC 85354-9, the two as components), as the R4 vital-signs profile has it, when both are in the same
/// chunk of rows (`begin`). A reading without a partner there is an Observation of its own.
package struct FHIRObservationEncoder {
    package enum Form: Sendable {
        case bundle
        case ndjson
    }

    /// Who the Observations are about, as the receiver may know them.
    package enum Subject: Sendable {
        /// A company's download: the per-request pseudonym its receipts and Consent use (`ConsentPseudonyms`).
        case requestPseudonym(request: UUID, pseudonym: String)
        /// The person's own export: their account.
        case account(UUID)
    }

    let form: Form
    private var out = DownloadBytes(capacity: Self.chunkSize + 2048)
    /// What was written since the last chunk was taken.
    var bytes: [UInt8] { out.bytes }
    private var written = 0
    /// Owns the memory of `idPrefix` and of the pieces in `types` and `panel`: every copy of the encoder holds
    /// it, and `append` keeps it alive to its end.
    private let fixed: FixedBytes
    private let idPrefix: UnsafeBufferPointer<UInt8>
    private let nextLink: String?
    private let types: [TypeBytes?]
    private let panel: PanelBytes
    /// For the current chunk: the row each blood pressure reading is written with (its partner), or -1;
    /// empty when the chunk has no pair. Kept between chunks for its capacity, as is `pressureRows`.
    private var partner: [Int] = []
    private var pressureRows: [Int] = []

    /// `idPrefix` makes the Observations' ids unique across what one receiver gets (a request's id for a
    /// company: two requests to one person give different ids); `nextLink` is the Bundle's `next` link
    /// (the download with its next cursor) without the cursor; `timestamp` the Bundle's.
    package init(form: Form, subject: Subject, idPrefix: String, timestamp: Date, nextLink: String? = nil) {
        self.form = form
        let fixed = FixedBytes()
        self.fixed = fixed
        self.idPrefix = fixed.keep(idPrefix)
        self.nextLink = nextLink
        let subjectJSON: String
        switch subject {
        case .requestPseudonym(let request, let pseudonym):
            subjectJSON = Self.identifierReference(
                system: FHIRSystems.requestPseudonymPrefix + request.uuidString.lowercased(), value: pseudonym)
        case .account(let id):
            subjectJSON = Self.identifierReference(system: FHIRSystems.account, value: id.uuidString.lowercased())
        }
        var table = [TypeBytes?](repeating: nil, count: Int(SampleType.allCases.map(\.code).max()!) + 1)
        for type in SampleType.allCases { table[Int(type.code)] = TypeBytes(type, subject: subjectJSON, in: fixed) }
        types = table
        panel = PanelBytes(subject: subjectJSON, in: fixed)
        if form == .bundle {
            out.append(#"{"resourceType":"Bundle","type":"collection","timestamp":""#)
            out.appendTime(timestamp)
            out.append(Self.quote)
        }
    }

    /// An Observation is twelve times a CSV line, so a chunk holds 256 KiB: with CSV's 64 KiB, a download
    /// of a million samples went to the socket in 8,700 sends, whose cost per send outweighed the encoding.
    static let chunkSize = 256 * 1024

    var isChunkFull: Bool { out.bytes.count >= Self.chunkSize }

    mutating func takeChunk() -> [UInt8] {
        defer { out = DownloadBytes(capacity: Self.chunkSize + 2048) }
        return out.bytes
    }

    /// Pairs the chunk's blood pressure readings: each systolic with the first unpaired diastolic of the
    /// same instant, in arrival order. The panel is written at the first of the two rows.
    ///
    /// Half the rows of a chunk can be blood pressure readings, so this allocates nothing per reading: when
    /// their times only increase (a device's readings, in arrival order), no two share an instant and
    /// there is nothing to pair; otherwise the readings are sorted by (time, row) and each run of one
    /// instant is paired in arrival order.
    mutating func begin(codes: [Int16], times: [Int64]) {
        partner.removeAll(keepingCapacity: true)
        pressureRows.removeAll(keepingCapacity: true)
        let systolic = SampleType.systolicPressure.code
        let diastolic = SampleType.diastolicPressure.code
        var increasing = true
        for row in codes.indices where codes[row] == systolic || codes[row] == diastolic {
            if let previous = pressureRows.last, times[previous] >= times[row] { increasing = false }
            pressureRows.append(row)
        }
        guard !increasing else { return }
        pressureRows.sort { times[$0] != times[$1] ? times[$0] < times[$1] : $0 < $1 }
        var start = 0
        while start < pressureRows.count {
            var end = start + 1
            while end < pressureRows.count, times[pressureRows[end]] == times[pressureRows[start]] { end += 1 }
            if end - start > 1 { pair(pressureRows[start..<end], codes: codes) }
            start = end
        }
    }

    /// Pairs the readings of one instant, given in arrival order.
    private mutating func pair(_ rows: ArraySlice<Int>, codes: [Int16]) {
        var waitingSystolic: [Int] = []
        var waitingDiastolic: [Int] = []
        for row in rows {
            if codes[row] == SampleType.systolicPressure.code {
                if waitingDiastolic.isEmpty { waitingSystolic.append(row) } else { link(row, waitingDiastolic.removeFirst(), count: codes.count) }
            } else if waitingSystolic.isEmpty {
                waitingDiastolic.append(row)
            } else {
                link(row, waitingSystolic.removeFirst(), count: codes.count)
            }
        }
    }

    private mutating func link(_ one: Int, _ other: Int, count: Int) {
        if partner.isEmpty { partner = [Int](repeating: -1, count: count) }
        (partner[one], partner[other]) = (other, one)
    }

    /// Writes row `row`; answers how many samples that released (2 for a panel, 0 for the second reading
    /// of a panel already written, or for a code this server does not know).
    mutating func append(codes: [Int16], times: [Int64], values: [Double], row: Int) -> Int {
        // `types`, `panel` and `idPrefix` point into `fixed`'s memory: it must outlive every use of them here.
        defer { withExtendedLifetime(fixed) {} }
        let code = codes[row]
        guard code >= 0, Int(code) < types.count, let type = types[Int(code)] else { return 0 }
        if !partner.isEmpty, partner[row] >= 0 {
            let other = partner[row]
            guard other > row else { return 0 }
            let (systolic, diastolic) = code == SampleType.systolicPressure.code ? (row, other) : (other, row)
            openResource()
            out.append(Self.opening)
            appendID(code: panel.idCode, micros: times[row])
            out.append(panel.afterID)
            out.appendTime(micros: times[row])
            out.append(panel.systolic)
            out.appendNumber(values[systolic])
            out.append(panel.diastolic)
            out.appendNumber(values[diastolic])
            out.append(panel.closing)
            closeResource()
            return 2
        }
        openResource()
        out.append(Self.opening)
        appendID(code: type.idCode, micros: times[row])
        out.append(type.afterID)
        out.appendTime(micros: times[row])
        if type.isPeriod {
            out.append(Self.periodEnd)
            // Sleep's sample is the period's start and its length in hours; other totals carry no length.
            let end = code == SampleType.sleepingHours.code ? times[row] + Int64((values[row] * 3_600_000_000).rounded()) : times[row]
            out.appendTime(micros: end)
            out.append(Self.periodClose)
        } else {
            out.append(Self.quote)
        }
        out.append(Self.valueOpening)
        out.appendNumber(values[row])
        out.append(type.closing)
        closeResource()
        return 1
    }

    /// Closes the Bundle (its `next` link carries the download's next cursor); NDJSON needs nothing more.
    mutating func finish(nextCursor: String) {
        guard form == .bundle else { return }
        if written > 0 { out.append("]") }
        if let nextLink {
            out.append(#","link":[{"relation":"next","url":"#)
            out.bytes += Array(JSONStringLiteral.of(nextLink + nextCursor).utf8)
            out.append("}]")
        }
        out.append("}")
    }

    // MARK: Pieces

    private mutating func openResource() {
        guard form == .bundle else { return }
        // FHIR JSON has no empty arrays: `entry` opens with its first resource.
        out.append(written == 0 ? Self.firstEntry : Self.nextEntry)
    }

    private mutating func closeResource() {
        out.append(form == .bundle ? Self.entryClose : Self.newline)
        written += 1
    }

    /// `<prefix>-<code>-<microseconds since 1970>`: unique for a person (one sample per type and instant),
    /// the same in every download of the sample, and within FHIR's 64 characters.
    private mutating func appendID(code: UnsafeBufferPointer<UInt8>, micros total: Int64) {
        out.append(idPrefix)
        out.append(code)
        if total < 0 { out.bytes.append(UInt8(ascii: "n")) }
        out.appendDigits(Int(total.magnitude), width: 1)
    }

    private static let opening: StaticString = #"{"resourceType":"Observation","id":""#
    private static let periodEnd: StaticString = #"","end":""#
    private static let periodClose: StaticString = #""}"#
    private static let quote: StaticString = #"""#
    private static let valueOpening: StaticString = #","valueQuantity":{"value":"#
    private static let firstEntry: StaticString = #","entry":[{"resource":"#
    private static let nextEntry: StaticString = #",{"resource":"#
    private static let entryClose: StaticString = "}"
    private static let newline: StaticString = "\n"

    static func identifierReference(system: String, value: String) -> String {
        #"{"type":"Patient","identifier":{"system":\#(JSONStringLiteral.of(system)),"value":\#(JSONStringLiteral.of(value))}}"#
    }

    static func coding(_ code: ObservationCoding.Code) -> String {
        #"{"system":\#(JSONStringLiteral.of(code.system)),"code":\#(JSONStringLiteral.of(code.code)),"display":\#(JSONStringLiteral.of(code.display))}"#
    }

    static func category(_ category: ObservationCoding.Category) -> String {
        #"[{"coding":[{"system":"\#(FHIRSystems.observationCategory)","code":"\#(category.rawValue)","display":"\#(category.display)"}]}]"#
    }

    static func quantityUnit(_ coding: ObservationCoding) -> String {
        #","unit":\#(JSONStringLiteral.of(coding.unitDisplay)),"system":"\#(FHIRSystems.ucum)","code":\#(JSONStringLiteral.of(coding.unitCode))}"#
    }

    /// One type's fixed parts, around the id, the times and the value (in the encoder's `FixedBytes`).
    private struct TypeBytes {
        var idCode: UnsafeBufferPointer<UInt8>
        var afterID: UnsafeBufferPointer<UInt8>
        var isPeriod: Bool
        var closing: UnsafeBufferPointer<UInt8>

        init(_ type: SampleType, subject: String, in fixed: FixedBytes) {
            let coding = type.observationCoding
            idCode = fixed.keep("-\(type.code)-")
            isPeriod = coding.effective == .period
            let profile = coding.profile.map { #","meta":{"profile":[\#(JSONStringLiteral.of($0))]}"# } ?? ""
            let codes = ([coding.code] + coding.alsoCodes).map(coding(_:)).joined(separator: ",")
            afterID = fixed.keep(
                #""\#(profile),"status":"final","category":\#(category(coding.category)),"code":{"coding":[\#(codes)],"#
                    + #""text":\#(JSONStringLiteral.of(coding.code.display))},"subject":\#(subject),"#
                    + (isPeriod ? #""effectivePeriod":{"start":""# : #""effectiveDateTime":""#))
            closing = fixed.keep(quantityUnit(coding) + "}")
        }
    }

    /// The blood pressure panel's fixed parts (in the encoder's `FixedBytes`).
    private struct PanelBytes {
        var idCode: UnsafeBufferPointer<UInt8>
        var afterID: UnsafeBufferPointer<UInt8>
        var systolic: UnsafeBufferPointer<UInt8>
        var diastolic: UnsafeBufferPointer<UInt8>
        var closing: UnsafeBufferPointer<UInt8>

        init(subject: String, in fixed: FixedBytes) {
            idCode = fixed.keep("-bp-")
            let systolicCoding = SampleType.systolicPressure.observationCoding
            let diastolicCoding = SampleType.diastolicPressure.observationCoding
            let panel = ObservationCoding.bloodPressurePanel
            afterID = fixed.keep(
                #"","meta":{"profile":["\#(ObservationCoding.bloodPressureProfile)"]},"status":"final","#
                    + #""category":\#(category(.vitalSigns)),"code":{"coding":[\#(coding(panel))],"text":"Blood pressure"},"#
                    + #""subject":\#(subject),"effectiveDateTime":""#)
            systolic = fixed.keep(
                #"","component":[{"code":{"coding":[\#(coding(systolicCoding.code))]},"valueQuantity":{"value":"#)
            diastolic = fixed.keep(
                quantityUnit(systolicCoding) + "}"
                    + #",{"code":{"coding":[\#(coding(diastolicCoding.code))]},"valueQuantity":{"value":"#)
            closing = fixed.keep(quantityUnit(diastolicCoding) + "}]}")
        }
    }
}
