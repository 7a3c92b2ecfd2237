import Foundation
import Logging
import PostgresNIO

extension SampleService {
    /// `correct(_:by:logger:)` from what the API and the console receive (`SampleCorrection.parse`): the role
    /// is checked before the input is read, so a company is told 403 whatever it sent.
    package func correct(type: String?, at: String?, from: String?, to: String?, by principal: Principal, logger: Logger)
        async throws -> (correction: SampleCorrection, deleted: Int)
    {
        guard principal.role == .user else { throw SampleError.notAUser }
        let correction = try SampleCorrection.parse(type: type, at: at, from: from, to: to)
        return (correction, try await correct(correction, by: principal, logger: logger))
    }

    /// Deletes the samples `correction` names, people only, in one transaction with everything that follows
    /// from it: the rollups of the touched days (so the person's statistics and charts), an entry in their
    /// access log and an audit event, both with the type, the range and the count, never a value. Exports
    /// and downloads read the samples themselves, so they follow at once: nothing deleted is released
    /// after the commit. Answers how many samples were deleted; nothing is recorded when there were none.
    ///
    /// What was already released stays as it was: a company's copy of a download, and group and peer
    /// figures already computed and stored (`group_releases`, `peer_month_cells`), which are never recomputed.
    package func correct(_ correction: SampleCorrection, by principal: Principal, logger: Logger) async throws -> Int {
        guard principal.role == .user else { throw SampleError.notAUser }
        return try await client.withTransaction(logger: logger) { connection in
            // Every sample of a type may be years of readings: the longer bound, as a time-zone rebuild has.
            try await LongStatements.allow(on: connection, logger: logger)
            let deleted = try await SampleCorrectionStore.delete(correction, of: principal.accountID, on: connection, logger: logger)
            guard deleted > 0 else { return 0 }
            // A download that read these samples ahead reads them again before sending (`streamRelease`).
            try await SampleRevisionStore.advanceDataRevision(of: principal.accountID, on: connection, logger: logger)
            try await AccessLogStore.recordCorrection(
                userID: principal.accountID, type: correction.type, from: correction.from, to: correction.to, samples: Int64(deleted),
                on: connection, logger: logger)
            let subject = try await pseudonymizer.pseudonym(for: principal.accountID, on: connection, logger: logger)
            var details: [String: AuditValue] = ["type": .string(correction.type.rawValue), "samples": .int(deleted)]
            if let from = correction.from { details["from"] = .string(Timestamp.rfc3339(from)) }
            if let to = correction.to { details["to"] = .string(Timestamp.rfc3339(to)) }
            try await AuditLog.append(
                AuditEvent(actorID: subject, actorRole: Role.user.rawValue, action: AuditAction.samplesCorrected, subject: subject, details: details),
                on: connection, logger: logger)
            return deleted
        }
    }

    /// How many samples `correction` would delete now, without deleting anything: what the console's
    /// confirmation says before the person confirms.
    package func count(of correction: SampleCorrection, by principal: Principal, logger: Logger) async throws -> Int {
        guard principal.role == .user else { throw SampleError.notAUser }
        return try await client.withConnection { connection in
            try await SampleCorrectionStore.count(correction, of: principal.accountID, on: connection, logger: logger)
        }
    }

    /// The person's `limit` latest samples of `type`, newest first: the ones the console offers to delete one by one.
    package func latest(_ type: SampleType, limit: Int, by principal: Principal, logger: Logger) async throws -> [Sample] {
        guard principal.role == .user else { throw SampleError.notAUser }
        return try await client.withConnection { connection in
            try await SampleCorrectionStore.latest(type, of: principal.accountID, limit: limit, on: connection, logger: logger)
        }
    }
}
