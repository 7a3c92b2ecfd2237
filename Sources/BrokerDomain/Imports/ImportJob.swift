import Foundation

/// An Apple Health import run in the background (a file over `IMPORT_BACKGROUND_BYTES`), as its owner sees it.
package struct ImportJob: Sendable, Equatable {
    package enum Status: String, Sendable, Codable {
        case running, succeeded, failed
    }

    /// Why a job failed: the problem document the request would have answered had it run synchronously.
    package struct Failure: Sendable, Equatable, Codable {
        package var type: String
        package var title: String
        package var status: Int
        package var detail: String

        package init(type: String, title: String, status: Int, detail: String) {
            self.type = type
            self.title = title
            self.status = status
            self.detail = detail
        }

        /// A job the server stopped or lost (a shutdown, a restart): nothing of it was stored.
        static func interrupted(detail: String) -> Failure {
            Failure(
                type: "https://data4help.example/problems/import-interrupted", title: "The import was interrupted",
                status: 500, detail: detail)
        }
    }

    package var id: UUID
    package var userID: UUID
    package var status: Status
    package var bytesTotal: Int64
    package var bytesRead: Int64
    package var recordsRead: Int
    /// Samples stored so far: not visible until the import commits; 0 once it failed (nothing was kept).
    package var stored: Int
    package var createdAt: Date
    package var finishedAt: Date?
    package var result: AppleHealthImport.Result?
    package var failure: Failure?

    /// A running job at its start.
    init(id: UUID, userID: UUID, bytesTotal: Int64, createdAt: Date) {
        self.id = id
        self.userID = userID
        status = .running
        self.bytesTotal = bytesTotal
        bytesRead = 0
        recordsRead = 0
        stored = 0
        self.createdAt = createdAt
    }

    init(
        id: UUID, userID: UUID, status: Status, bytesTotal: Int64, bytesRead: Int64, recordsRead: Int, stored: Int,
        createdAt: Date, finishedAt: Date?, result: AppleHealthImport.Result?, failure: Failure?
    ) {
        self.id = id
        self.userID = userID
        self.status = status
        self.bytesTotal = bytesTotal
        self.bytesRead = bytesRead
        self.recordsRead = recordsRead
        self.stored = stored
        self.createdAt = createdAt
        self.finishedAt = finishedAt
        self.result = result
        self.failure = failure
    }

    mutating func apply(_ progress: AppleHealthImport.Progress) {
        bytesRead = progress.bytesRead
        recordsRead = progress.recordsRead
        stored = progress.stored
    }
}
