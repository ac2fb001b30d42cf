import CSQLite
import Foundation

/// Copies the WAL back into the database file on its own thread and connection. A checkpoint ends with an
/// fsync; done by the writer (SQLite's automatic checkpoint) it stalls every commit behind it, done here the
/// writer keeps committing meanwhile (WAL allows one checkpointer beside one writer).
final class Checkpointer: @unchecked Sendable {
    /// The checkpointer's lifecycle.
    private enum State {
        case running
        case stopping
        case stopped
    }

    private let database: Database
    private let interval: Double
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var commitsSinceCheckpoint = 0
    private var state = State.running

    init(path: String, configuration: StoreConfiguration) throws(StoreError) {
        database = try Database(path: path, busyTimeout: configuration.busyTimeout)
        // A connection opens the WAL only with its first read; until then sqlite3_wal_checkpoint_v2 finds no
        // WAL and does nothing (it returns SQLITE_OK), and every checkpoint would fall to the writer's backstop.
        _ = try database.integer("PRAGMA schema_version")
        interval = configuration.checkpointInterval
        BackgroundThread.start(named: "RunStore checkpointer") { [self] in run() }
    }

    /// Called by the writer after each commit; never waits.
    func noteCommit() {
        condition.lock()
        commitsSinceCheckpoint += 1
        if commitsSinceCheckpoint == 1 { condition.signal() }
        condition.unlock()
    }

    /// Stops the thread after its current checkpoint.
    func stop() {
        condition.lock()
        if state == .running { state = .stopping }
        condition.broadcast()
        while state != .stopped { condition.wait() }
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while true {
            while commitsSinceCheckpoint == 0 && state == .running { condition.wait() }
            if state != .running { break }
            commitsSinceCheckpoint = 0
            condition.unlock()
            // PASSIVE: copies what it can without blocking the writer or readers; busy or locked is fine.
            _ = sqlite3_wal_checkpoint_v2(database.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            condition.lock()
            // At most one checkpoint per interval: each ends with an fsync.
            let deadline = Date(timeIntervalSinceNow: interval)
            while state == .running, condition.wait(until: deadline) {}
        }
        state = .stopped
        condition.broadcast()
        condition.unlock()
    }
}
