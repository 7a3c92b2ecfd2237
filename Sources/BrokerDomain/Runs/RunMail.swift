import Foundation

/// What runners are told by mail.
enum RunMail {
    static func cancelled(_ run: Run, to email: String) -> OutgoingMail {
        OutgoingMail(
            to: email, subject: "Run cancelled: \(run.name)",
            body: """
                \(run.organiserName) cancelled the run "\(run.name)" that was to start at \(Timestamp.rfc3339(run.startsAt)).

                The run's request for your position has been withdrawn: nothing more of yours is shared for it.
                """)
    }
}
