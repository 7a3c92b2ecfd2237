import Foundation

/// This instance's imports under way: who is importing (one import per person at a time), the background
/// jobs with their live progress and tasks, and the last jobs that ended (so that their outcome is shown even
/// if recording it failed). Progress lives here, not in the database: the import's transaction holds its
/// connection, and writing progress rows would take a second one (a nested lease).
actor ImportJobRegistry {
    private struct Running {
        var job: ImportJob
        var task: Task<Void, Never>?
    }

    private var importing: Set<UUID> = []
    private var running: [UUID: Running] = [:]
    private var ended: [UUID: ImportJob] = [:]
    private var endedOrder: [UUID] = []
    private var stopping = false
    let maximumBackground: Int
    /// Ended jobs kept in memory; older ones are read from the database.
    static let endedKept = 256

    init(maximumBackground: Int) { self.maximumBackground = max(1, maximumBackground) }

    func isImporting(_ userID: UUID) -> Bool { importing.contains(userID) }

    /// Claims the person's one import slot for a synchronous import.
    func reserve(_ userID: UUID) throws(ImportJobError) {
        guard !importing.contains(userID) else { throw .alreadyRunning }
        importing.insert(userID)
    }

    /// Claims the person's slot and one of the background slots for `job`.
    func reserve(background job: ImportJob) throws(ImportJobError) {
        guard !importing.contains(job.userID) else { throw .alreadyRunning }
        guard !stopping, running.count < maximumBackground else { throw .busy }
        importing.insert(job.userID)
        running[job.id] = Running(job: job)
    }

    /// Gives back a synchronous import's slot, or a background job's that never started.
    func release(_ userID: UUID, job id: UUID? = nil) {
        importing.remove(userID)
        if let id { running[id] = nil }
    }

    /// The job's task, so that a shutdown can cancel it. A task that ended already is not kept.
    func attach(_ task: Task<Void, Never>, to id: UUID) {
        if stopping { task.cancel() }
        running[id]?.task = task
    }

    func update(_ id: UUID, _ progress: AppleHealthImport.Progress) {
        running[id]?.job.apply(progress)
    }

    /// The job ended (its outcome is recorded, or recording it failed): it leaves the running set.
    func end(_ job: ImportJob) {
        running[job.id] = nil
        importing.remove(job.userID)
        ended[job.id] = job
        endedOrder.append(job.id)
        if endedOrder.count > Self.endedKept { ended[endedOrder.removeFirst()] = nil }
    }

    func job(_ id: UUID) -> ImportJob? { running[id]?.job ?? ended[id] }

    /// Refuses new background jobs and cancels the running ones; returns their tasks to wait for.
    func stop() -> [Task<Void, Never>] {
        stopping = true
        let tasks = running.values.compactMap(\.task)
        for task in tasks { task.cancel() }
        return tasks
    }
}
