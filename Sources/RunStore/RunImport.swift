import CSQLite
import RunCore

/// Loads a recorded track as a finished run through the same engine as live runs: a ``RunTracker`` sees
/// each fix with the clock set to the fix's own time, and everything a live run stores is stored (fixes
/// accepted and rejected, awards, badge history, the saved run record).
public enum RunImport {
    /// What one import did.
    public struct Outcome: Sendable {
        /// The new run's id.
        public var runID: Int64
        /// The stored run record (status saved).
        public var record: RunRecord
        /// The engine's summary of the run.
        public var summary: RunSummary
        /// The key of a runner created by this import (shown once: only its hash is stored); nil when the
        /// runner existed.
        public var newRunnerKey: String?
    }

    /// Runs `fixes` through a tracker for `runner` (created with a new key when missing), stores the run and
    /// waits until it is committed. `now` is the creation time given to a new runner.
    public static func importRun(_ fixes: [Fix], runner: String, into store: any RunStore,
                                 configuration: TrackerConfiguration = .init(),
                                 now: Double) throws(StoreError) -> Outcome {
        guard !fixes.isEmpty else { throw StoreError.invalidInput("the track has no points") }
        var newKey: String?
        let existing = try store.runner(named: runner)
        if existing == nil {
            let key = RunnerKey.generate()
            newKey = key
            store.submit(.runner(name: runner, keyHash: RunnerKey.hash(key), created: now))
        }
        let id = try store.allocateRunID()
        var tracker = RunTracker(configuration: configuration, history: existing?.history ?? BadgeHistory())
        // The row exists before its first fix, as on the server; its start moves to the first accepted fix
        // when the run finishes.
        store.submit(.runStarted(id: id, runner: runner, started: fixes[0].timestamp))
        var firstAccepted: Double?
        for (offset, fix) in fixes.enumerated() {
            var rejection: FixRejection?
            switch tracker.add(fix, now: fix.timestamp) {
            case .rejected(let reason):
                rejection = reason
            case .accepted(let progress):
                if firstAccepted == nil { firstAccepted = fix.timestamp }
                for award in progress.awards {
                    store.submit(.award(StoredAward(runner: runner, runID: id, award: award)))
                }
            }
            store.submit(.fix(StoredFix(runID: id, sequence: Int64(offset + 1), fix: fix, received: fix.timestamp,
                                        rejection: rejection), acknowledgement: nil))
        }
        let summary = tracker.finish()
        let record = RunRecord(id: id, runner: runner, started: firstAccepted ?? fixes[0].timestamp,
                               ended: tracker.lastAcceptedTimestamp ?? fixes[fixes.count - 1].timestamp,
                               distance: summary.distance, elapsed: summary.elapsed, movingTime: summary.movingTime,
                               status: .saved, rejections: summary.rejections)
        store.submit(.runFinished(record, splits: summary.splits, checkpoints: summary.checkpoints))
        store.submit(.history(runner: runner, tracker.history))
        store.flush()
        guard try store.run(id: id)?.record.status == .saved else {
            throw StoreError(code: SQLITE_IOERR, message: "the imported run \(id) could not be stored (see the log above)")
        }
        return Outcome(runID: id, record: record, summary: summary, newRunnerKey: newKey)
    }
}
