import CSQLite
import Foundation
import RunCore

/// Loads recorded activities as finished runs through the same engine as live runs: a ``RunTracker`` sees
/// each fix with the clock set to the fix's own time (and a ``RunTracker/pause()`` at each segment break),
/// and everything a live run stores is stored (fixes accepted and rejected, awards, badge history, the saved
/// run record), plus an ``ImportRecord`` saying where the run came from.
///
/// The command line and the web API share ``importFile(_:runner:into:configuration:now:)``.
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
        /// Where the run came from; nil for ``importRun(_:runner:into:configuration:now:)``.
        public var source: ImportRecord?
        /// Why the engine refused the activity's first point, if it did: its distance starts at a later
        /// point, its clock still at this one.
        public var firstPointRejection: FixRejection?
        /// Pauses the engine found in the recording's gaps (silences crossed at walking pace or slower, see
        /// ``FilterConfiguration/pauseGap``), beside the file's own segment breaks.
        public var pausesInGaps = 0
    }

    /// What became of one activity of a file.
    public enum ActivityResult: Sendable {
        /// Stored as a new run.
        case imported(Outcome, ImportedActivity)
        /// The same activity (runner, first point's time, point count) was imported before as this run.
        case alreadyImported(runID: Int64, ImportedActivity)
    }

    /// Reads a GPX or TCX file (by content) and imports each of its activities for `runner`, skipping those
    /// already imported. Fails before storing anything when the file cannot be read.
    public static func importFile(_ data: Data, runner: String, into store: any RunStore,
                                  configuration: TrackerConfiguration = .init(),
                                  now: Double) throws(StoreError) -> (format: ActivityFormat, results: [ActivityResult]) {
        let file = try ActivityFile.read(data)
        var results: [ActivityResult] = []
        for activity in file.activities {
            results.append(try importActivity(activity, format: file.format, runner: runner, into: store,
                                              configuration: configuration, now: now))
        }
        return (file.format, results)
    }

    /// Imports one activity for `runner` unless the same one was imported before.
    public static func importActivity(_ activity: ImportedActivity, format: ActivityFormat, runner: String,
                                      into store: any RunStore, configuration: TrackerConfiguration = .init(),
                                      now: Double) throws(StoreError) -> ActivityResult {
        guard let firstPointTime = activity.firstPointTime else {
            throw StoreError.invalidInput("the track has no points")
        }
        if let existing = try store.importedRun(runner: runner, firstPointTime: firstPointTime,
                                                pointCount: activity.pointCount) {
            return .alreadyImported(runID: existing, activity)
        }
        let outcome = try storeActivity(activity, format: format, runner: runner, into: store, configuration: configuration,
                                now: now)
        return .imported(outcome, activity)
    }

    /// Runs `fixes` (one segment) through a tracker for `runner` and stores the run, without a duplicate
    /// check or an import record.
    public static func importRun(_ fixes: [Fix], runner: String, into store: any RunStore,
                                 configuration: TrackerConfiguration = .init(),
                                 now: Double) throws(StoreError) -> Outcome {
        try storeActivity(ImportedActivity(segments: [fixes]), format: nil, runner: runner, into: store,
                       configuration: configuration, now: now)
    }

    /// Runs the activity through a tracker for `runner` (created with a new key when missing), stores the run
    /// and waits until it is committed. `now` is the creation time given to a new runner.
    private static func storeActivity(_ activity: ImportedActivity, format: ActivityFormat?, runner: String,
                              into store: any RunStore, configuration: TrackerConfiguration,
                              now: Double) throws(StoreError) -> Outcome {
        let fixes = activity.fixes
        guard let first = fixes.first else {
            throw StoreError.invalidInput("the track has no points")
        }
        var newKey: String?
        let existing = try store.runner(named: runner)
        if existing == nil {
            let key = RunnerKey.generate()
            newKey = key
            store.submit(.runner(name: runner, keyHash: RunnerKey.hash(key), created: now))
        }
        let id = try store.allocateRunID()
        var tracker = RunTracker(configuration: configuration, history: existing?.history ?? BadgeHistory())
        // An imported activity's clock runs from its first recorded point to its last, as the device's did,
        // even when the filter refuses them, as long as they belong to the recording (within the recording gap
        // of the next point, and in order): a glitched point an hour off moves neither end.
        let gap = configuration.filter.recordingGap
        if fixes.count == 1 || (0...gap).contains(fixes[1].timestamp - first.timestamp) {
            tracker.startClock(at: first.timestamp)
        }
        var firstPointRejection: FixRejection?
        // The row exists before its first fix, as on the server; its start moves to the clock's start when the
        // run finishes.
        store.submit(.runStarted(id: id, runner: runner, started: first.timestamp))
        var sequence: Int64 = 0
        var pausesBefore: [Int64] = []
        for (index, segment) in activity.segments.enumerated() {
            if index > 0 {
                tracker.pause()
                pausesBefore.append(sequence + 1)
            }
            for fix in segment {
                sequence += 1
                var rejection: FixRejection?
                switch tracker.addNotingSegment(fix, now: fix.timestamp).outcome {
                case .rejected(let reason):
                    rejection = reason
                    if sequence == 1 { firstPointRejection = reason }
                case .held:
                    break  // never: each fix is judged at its own time, so none is stale
                case .accepted(let progress):
                    for award in progress.awards {
                        store.submit(.award(StoredAward(runner: runner, runID: id, award: award)))
                    }
                }
                store.submit(.fix(StoredFix(runID: id, sequence: sequence, fix: fix, received: fix.timestamp,
                                            rejection: rejection), acknowledgement: nil))
            }
        }
        let summary = tracker.finish()
        let last = fixes[fixes.count - 1].timestamp
        let recordStart = tracker.startedAt ?? first.timestamp
        var recordEnd = tracker.lastAcceptedTimestamp ?? max(last, recordStart)
        if let lastAccepted = tracker.lastAcceptedTimestamp, (0...gap).contains(last - lastAccepted) {
            recordEnd = last
        }
        let record = RunRecord(id: id, runner: runner, started: recordStart, ended: recordEnd,
                               distance: summary.distance, elapsed: recordEnd - recordStart,
                               movingTime: summary.movingTime,
                               status: .saved, rejections: summary.rejections, elevationGain: summary.elevationGain,
                               elevationLoss: summary.elevationLoss)
        store.submit(.runFinished(record, splits: summary.splits, checkpoints: summary.checkpoints))
        store.submit(.history(runner: runner, tracker.history))
        var source: ImportRecord?
        if let format {
            let imported = ImportRecord(runID: id, runner: runner, format: format, firstPointTime: first.timestamp,
                                        pointCount: fixes.count, skippedPoints: activity.skippedPoints,
                                        deviceDistance: activity.deviceDistance, pausesBefore: pausesBefore)
            store.submit(.imported(imported))
            source = imported
        }
        store.flush()
        guard try store.run(id: id)?.record.status == .saved else {
            throw StoreError(.unavailable, "the imported run \(id) could not be stored (see the log above)")
        }
        return Outcome(runID: id, record: record, summary: summary, newRunnerKey: newKey, source: source,
                       firstPointRejection: firstPointRejection, pausesInGaps: tracker.pausesInGaps)
    }
}
