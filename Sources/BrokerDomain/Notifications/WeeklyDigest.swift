import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The weekly digest: each Monday from 07:00 UTC, every person whose data contributed to a group request
/// in the previous week (Monday to Sunday, UTC) who has the digest on gets one mail. It is written a batch
/// of people at a time, each batch one short transaction holding the week's row and one connection, so
/// 20,000 people cost a few dozen statements and no other work waits for them; a crash or a second
/// instance continues where the last batch stopped, and a person's mail has a key, so none is written twice.
package struct WeeklyDigest: Sendable {
    let client: DatabasePool
    let outbox: MailOutbox
    let clock: WallClock
    /// The last week this instance saw done: the sweep asks every few seconds, and once the week is done
    /// the answer is known without a statement until the next week is due.
    private let doneWeek = DoneWeek()

    private final class DoneWeek: Sendable {
        let week = Mutex<CalendarDate?>(nil)
    }

    package init(client: DatabasePool, outbox: MailOutbox, clock: WallClock = .system) {
        self.client = client
        self.outbox = outbox
        self.clock = clock
    }

    /// The hour (UTC) of Monday from which last week's digest is written.
    package static let sendingHour = 7

    /// The Monday of the week whose digest is due at `now`: last week's, once this Monday's sending hour passed.
    package static func dueWeek(at now: Date) -> CalendarDate {
        let today = CalendarDate(now, in: .utc)
        let thisMonday = today.adding(days: -CalendarDate.weekday(ofDayNumber: today.dayNumber))
        let hour = Calendar(identifier: .gregorian).dateComponents(in: .utc, from: now).hour ?? 0
        let started = today != thisMonday || hour >= sendingHour
        return thisMonday.adding(days: started ? -7 : -14)
    }

    /// Writes the next batch of the due week's digest; the number of people the batch covered (0 when the
    /// week is done or another instance is writing it).
    @discardableResult
    package func writeBatch(limit: Int = 500, logger: Logger) async throws -> Int {
        let week = Self.dueWeek(at: clock.now)
        let from = Date(timeIntervalSince1970: Double(week.dayNumber) * 86_400)
        let to = from.addingTimeInterval(7 * 86_400)
        if doneWeek.week.withLock({ $0 }) == week { return 0 }
        return try await client.withTransaction(logger: logger) { connection in
            let after: UUID?
            let writtenBefore: Int
            switch try await DigestStore.lockWeek(week, on: connection, logger: logger) {
            case .busy: return 0
            case .done:
                doneWeek.week.withLock { $0 = week }
                return 0
            case .open(let from, let written): (after, writtenBefore) = (from, written)
            }
            let (people, last) = try await DigestStore.people(
                from: from, to: to, after: after, limit: limit, on: connection, logger: logger)
            var mails: [(mail: OutgoingMail, accountID: UUID, dedupeKey: String)] = []
            for person in people {
                let recipient = MailRecipient(
                    email: person.email, language: person.language, timeZone: person.timeZone.flatMap(TimeZone.init(identifier:)),
                    unsubscribeURL: try await outbox.unsubscribeURL(accountID: person.accountID, kind: .weeklyDigest, on: connection, logger: logger))
                var mail = WeeklyDigestMail.make(
                    requests: person.requests, companies: person.companies, weekStart: from, weekEnd: to.addingTimeInterval(-1),
                    to: recipient, publicURL: outbox.publicURL, settingsURL: outbox.settingsURL)
                mail.listUnsubscribe = recipient.unsubscribeURL
                mails.append((mail, person.accountID, "digest:\(week.description):\(person.accountID.uuidString.lowercased())"))
            }
            try await outbox.notifyMany(mails, kind: .weeklyDigest, on: connection, logger: logger)
            let done = last == nil
            try await DigestStore.advance(week, after: last ?? after, written: mails.count, done: done, on: connection, logger: logger)
            if done {
                logger.info(
                    "weekly digest written", metadata: ["digest.week": "\(week.description)", "digest.mails": "\(writtenBefore + mails.count)"])
            }
            return done ? 0 : max(people.count, 1)
        }
    }
}
