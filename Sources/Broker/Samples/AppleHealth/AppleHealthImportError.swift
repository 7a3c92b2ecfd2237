/// Why an Apple Health export (export.xml or export.zip) was refused; every case but `unreadable` is the client's fault (422).
public enum AppleHealthImportError: Error, Equatable, Sendable {
    /// The document is not an Apple Health export: its root element is not `<HealthData>`, or it is not XML at all.
    case notAppleHealth
    /// The input ended before the closing `</HealthData>`.
    case truncated
    /// The DOCTYPE declares entities; refused outright so that nothing (billion laughs, external entities) is ever expanded.
    case entityDeclarationsNotAllowed
    /// The XML is not well-formed (the reason says where and why).
    case malformed(String)
    /// The upload is neither XML nor a ZIP archive.
    case notZip
    /// The ZIP archive holds no `export.xml`.
    case noExportXML
    /// The ZIP entry would inflate beyond the size limit, its declared size, or a plausible compression ratio.
    case zipBomb
    /// A ZIP feature this reader does not implement (ZIP64, encryption, several disks, another compression method).
    case unsupportedZip(String)
    /// The file on disk could not be read (the server's fault, not the client's).
    case unreadable(String)

    /// A sentence for the problem document's `detail`.
    public var message: String {
        switch self {
        case .notAppleHealth:
            "The file is not an Apple Health export: its root element must be <HealthData>."
        case .truncated:
            "The Apple Health export is truncated: it ends before the closing </HealthData>."
        case .entityDeclarationsNotAllowed:
            "The export's DOCTYPE declares entities, which are not accepted."
        case .malformed(let reason):
            "The Apple Health export is not well-formed XML: \(reason)."
        case .notZip:
            "The upload is neither an Apple Health export.xml nor a ZIP archive."
        case .noExportXML:
            "The ZIP archive contains no export.xml."
        case .zipBomb:
            "The ZIP archive's export.xml inflates beyond the accepted size or compression ratio."
        case .unsupportedZip(let feature):
            "The ZIP archive uses \(feature), which is not supported."
        case .unreadable(let reason):
            "The uploaded file could not be read: \(reason)."
        }
    }
}
