import CSQLite
import Foundation
import Locking

/// Copies the WAL back into the database file on its own thread and connection. A checkpoint ends with an
/// fsync; done by the writer (SQLite's automatic checkpoint) it stalls every commit behind it, done here the
/// writer keeps committing meanwhile (WAL allows one checkpointer beside one writer).
final class Checkpointer: Sendable {
    /// The checkpointer's lifecycle.
    private enum Phase {
        case running
        case stopping
        case stopped
    }

    /// What the writer and the checkpointer's thread share.
    private struct Shared {
        var commitsSinceCheckpoint = 0
        var phase = Phase.running
    }

    /// The checkpointer's own connection (only its thread checkpoints through it; the lock is never contended).
    private let database: Locked<Database>
    private let interval: Double
    private let shared = Locked(Shared())

    init(path: String, configuration: StoreConfiguration) throws(StoreError) {
        let database = try Database(path: path, busyTimeout: configuration.busyTimeout)
        // A connection opens the WAL only with its first read; until then sqlite3_wal_checkpoint_v2 finds no
        // WAL and does nothing (it returns SQLITE_OK), and every checkpoint would fall to the writer's backstop.
        _ = try database.integer("PRAGMA schema_version")
        self.database = Locked(database)
        interval = configuration.checkpointInterval
        BackgroundThread.start(named: "RunStore checkpointer") { [self] in run() }
    }

    /// Called by the writer after each commit; never waits.
    func noteCommit() {
        shared.withLock { shared in
            shared.commitsSinceCheckpoint += 1
            if shared.commitsSinceCheckpoint == 1 { self.shared.signal() }
        }
    }

    /// Stops the thread after its current checkpoint.
    func stop() {
        shared.withLock { if $0.phase == .running { $0.phase = .stopping } }
        shared.broadcast()
        shared.withLock(when: { $0.phase == .stopped }) { _ in }
    }

    private func run() {
        while true {
            let checkpoint = shared.withLock(when: { $0.commitsSinceCheckpoint > 0 || $0.phase != .running }) { shared in
                guard shared.phase == .running else { return false }
                shared.commitsSinceCheckpoint = 0
                return true
            }
            guard checkpoint else { break }
            // PASSIVE: copies what it can without blocking the writer or readers; busy or locked is fine.
            database.withLock { _ = sqlite3_wal_checkpoint_v2($0.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil) }
            // At most one checkpoint per interval: each ends with an fsync.
            shared.withLock(when: { $0.phase != .running }, before: Date(timeIntervalSinceNow: interval)) { _, _ in }
        }
        shared.withLock { $0.phase = .stopped }
        shared.broadcast()
    }
}
