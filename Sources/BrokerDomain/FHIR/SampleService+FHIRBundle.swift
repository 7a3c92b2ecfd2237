import Foundation
import Logging

extension SampleService {
    /// What a FHIR Bundle upload stored, and what of the Bundle it did not read.
    package struct FHIRBundleUpload: Sendable {
        package var ingest: SampleStore.IngestResult
        package var skippedResources: [String: Int]
        package var skippedObservations: [FHIRBundleContents.Skipped]
    }

    /// Imports a FHIR Bundle's Observations as the caller's samples, with every upload's rules: all of it is
    /// valid or nothing is stored (a problem per offending entry, the table's problems and the values' range
    /// alike), at most `SampleBatch.maximumCount` samples (a blood pressure panel is two), duplicates of a
    /// stored `(type, at)` not stored again, one transaction. The Observations' `subject` is not read: what
    /// the caller uploads is the caller's.
    package func upload(fhirBundle bundle: FHIRBundleImport.JSONObject, by principal: Principal, logger: Logger) async throws
        -> FHIRBundleUpload
    {
        guard principal.role == .user else { throw SampleError.notAUser }
        let contents = try FHIRBundleImport.read(bundle).get()
        guard contents.entries.count <= SampleBatch.maximumCount else {
            throw SampleError.invalid([
                FieldError(
                    field: "entry", message: "must hold at most \(SampleBatch.maximumCount) samples per upload (a blood pressure panel is two)")
            ])
        }
        if contents.entries.isEmpty && contents.problems.isEmpty {
            let skipped = contents.skippedResources.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            throw SampleError.invalid([
                FieldError(
                    field: "entry",
                    message: "holds no Observation Data4Help imports" + (skipped.isEmpty ? "" : " (skipped: \(skipped))"))
            ])
        }
        var problems = contents.problems
        var valid: [Sample] = []
        if !contents.entries.isEmpty {
            switch SampleBatch.validate(contents.entries, now: clock.now) {
            case .success(let samples): valid = samples
            case .failure(.invalid(let errors)): problems += errors
            case .failure(let error): throw error
            }
        }
        guard problems.isEmpty else {
            // In the Bundle's order, whichever check found them.
            let ordered = problems.enumerated().sorted {
                (Self.entryNumber($0.element.field), $0.offset) < (Self.entryNumber($1.element.field), $1.offset)
            }
            throw SampleError.invalid(FieldError.firstHundred(ordered.map(\.element), of: "entries"))
        }
        let ingest = try await client.withTransaction(logger: logger) { connection in
            try await SampleStore.ingest(valid, for: principal.accountID, on: connection, logger: logger)
        }
        return FHIRBundleUpload(ingest: ingest, skippedResources: contents.skippedResources, skippedObservations: contents.skippedObservations)
    }

    /// N of a field `entry[N]…`, or -1 for the Bundle's own fields.
    private static func entryNumber(_ field: String) -> Int {
        guard field.hasPrefix("entry["), let close = field.firstIndex(of: "]") else { return -1 }
        return Int(field[field.index(field.startIndex, offsetBy: 6)..<close]) ?? -1
    }
}
