/// Why an Apple Health export (export.xml or export.zip) was refused; every case but `unreadable` is the client's fault (422).
package enum AppleHealthImportError: Error, Equatable, Sendable {
    /// The upload has no bytes at all.
    case empty
    /// The upload does not start like XML (nor like a ZIP archive): a CSV, JSON, a PDF …
    case notXML
    /// The export is in UTF-16 or UTF-32 (a byte-order mark or NUL bytes): the importer reads UTF-8 only, as
    /// Apple writes it, so no other encoding can hide a DOCTYPE from the scanner.
    case notUTF8
    /// The document is XML, but not an Apple Health export: its root element is not `<HealthData>`.
    case notAppleHealth
    /// The input ended before the closing `</HealthData>`.
    case truncated
    /// The DOCTYPE declares entities; refused outright so that nothing (billion laughs, external entities) is ever expanded.
    case entityDeclarationsNotAllowed
    /// The XML is not well-formed (the reason says where and why).
    case malformed(String)
    /// The upload was sent as a ZIP archive but is not one.
    case notZip
    /// The ZIP archive is cut short or damaged (the reason says how); its export cannot be read whole.
    case damagedZip(String)
    /// The ZIP archive holds no export.xml (nor a localised one beside export_cda.xml); the names it does hold, a few.
    case noExportXML(found: [String])
    /// The ZIP archive holds several files that could be the export; their paths.
    case severalExports([String])
    /// The ZIP entry would inflate beyond the size limit, its declared size, or a plausible compression ratio.
    case zipBomb
    /// A ZIP feature this reader does not implement (ZIP64, encryption, several disks, another compression method).
    case unsupportedZip(String)
    /// The file on disk could not be read (the server's fault, not the client's).
    case unreadable(String)

    /// A sentence for the problem document's `detail`.
    package var message: String {
        switch self {
        case .empty:
            "The file is empty."
        case .notXML:
            "The file is not XML: an Apple Health export.xml starts with <?xml …> (or upload the export.zip as it is)."
        case .notUTF8:
            "The export is not UTF-8 (it is UTF-16 or UTF-32): Apple Health writes export.xml in UTF-8; upload the file as the iPhone made it, or convert it to UTF-8."
        case .notAppleHealth:
            "The file is not an Apple Health export: its root element must be <HealthData>."
        case .truncated:
            "The Apple Health export is truncated: it ends before the closing </HealthData> (was the upload or the copy cut short?)."
        case .entityDeclarationsNotAllowed:
            "The export's DOCTYPE declares entities, which are not accepted."
        case .malformed(let reason):
            "The Apple Health export is not well-formed XML: \(reason)."
        case .notZip:
            "The upload was sent as application/zip but is not a ZIP archive."
        case .damagedZip(let reason):
            "The ZIP archive is truncated or damaged (\(reason)): make the export.zip again, or upload the export.xml inside it."
        case .noExportXML(let found):
            "The ZIP archive contains no Apple Health export: expected apple_health_export/export.xml"
                + (found.isEmpty ? "; the archive is empty." : "; it holds \(Self.list(found)).")
        case .severalExports(let paths):
            "The ZIP archive holds several files that could be the export (\(Self.list(paths))); upload the one Apple Health wrote."
        case .zipBomb:
            "The ZIP archive's export.xml inflates beyond the accepted size or compression ratio."
        case .unsupportedZip(let feature):
            "The ZIP archive uses \(feature), which is not supported: upload the export.zip as the iPhone made it, or its export.xml."
        case .unreadable(let reason):
            "The uploaded file could not be read: \(reason)."
        }
    }

    /// Paths as a message lists them: the first few, and how many more.
    private static func list(_ paths: [String]) -> String {
        let shown = paths.prefix(5).map { $0.count > 120 ? String($0.prefix(120)) + "…" : $0 }.joined(separator: ", ")
        return paths.count > 5 ? "\(shown) and \(paths.count - 5) more" : shown
    }
}
