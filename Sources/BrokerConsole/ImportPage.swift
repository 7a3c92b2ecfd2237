import BrokerDomain
import BrokerHTTP
import Foundation

/// What `import.mustache` shows of a background Apple Health import: its progress while it runs (the page
/// reloads itself every second), then its result or the reason nothing was stored.
struct ImportPage {
    let job: ImportJob

    var values: [String: Any] {
        var values: [String: Any] = [
            "running": job.status == .running, "succeeded": job.status == .succeeded, "failed": job.status == .failed,
            "refresh": job.status == .running,
            "bytesRead": job.bytesRead, "bytesTotal": max(job.bytesTotal, 1),
            "read": Self.bytes(job.bytesRead), "total": Self.bytes(job.bytesTotal),
            "percent": job.bytesTotal > 0 ? Int(job.bytesRead * 100 / job.bytesTotal) : 0,
            "recordsRead": job.recordsRead, "storedSoFar": job.stored,
            "startedAt": Wording.time(job.createdAt),
        ]
        if let result = job.result {
            values["result"] = Self.values(result)
        }
        // Stored as the API answered it (English); shown in the page's language.
        if let failure = job.failure { values["detail"] = ProblemTranslation.text(failure.detail, in: ConsoleStrings.current.language) }
        return values
    }

    /// An import's result as the page lists it (also the JSON the upload script renders, in its own words).
    static func values(_ result: AppleHealthImport.Result) -> [String: Any] {
        [
            "stored": result.stored, "alreadyThere": result.alreadyThere, "repeatedInFile": result.repeatedInFile,
            "skipped": result.skipped.map { ["reason": $0.reason, "identifier": $0.identifier, "count": $0.count] },
            "hasSkipped": !result.skipped.isEmpty,
            "invalidCount": result.invalid.count, "hasInvalid": result.invalid.count > 0,
            "invalid": result.invalid.examples.map { ["line": $0.line, "identifier": $0.identifier, "reason": $0.reason] },
            "moreInvalid": result.invalid.count > result.invalid.examples.count
                ? ConsoleStrings.current.format(
                    "import.moreInvalid", ["count": ConsoleStrings.current.number(result.invalid.count - result.invalid.examples.count)]) : false,
            "timeZone": result.timeZone ?? false,
        ]
    }

    static func bytes(_ count: Int64) -> String {
        let strings = ConsoleStrings.current
        return count < 1 << 20
            ? strings.number(Int((Double(count) / 1000).rounded())) + " kB" : strings.decimal(Double(count) / 1_000_000) + " MB"
    }
}
