import RunCore
import RunStore
import Wire

/// A run fed by a phone app that was offline: its positions come late, after newer ones (a queue sent newest
/// first, or the gap's positions after the phone's current one). Each is stored as it comes; once they stop
/// coming for a second (and before the run ends) the run is measured again from its ``RunLog``, in time order,
/// so its figures are those of its positions in time order whatever order they came in.
extension Hub {
    /// Measures a run again from its log: the engine's state, the start, the badges' times and places (stored
    /// again), and what spectators have not been told yet (badges and splits it now reaches, and a `pace:` for
    /// where it stands, without a current pace: it is catching up).
    func remeasure(_ entry: RunnerEntry, now: Double) {
        guard let run = entry.run, let log = run.log, case .running(let runID, let oldStart) = run.phase else { return }
        run.lateArrival = nil
        var tracker = RunTracker(configuration: configuration.tracker.keepingTrack(false), history: run.startHistory)
        var splits: [Split] = []
        // The filter's verdicts in time order, to store again where they differ from the ones made on arrival.
        var verdicts = [FixRejection?](repeating: nil, count: log.entries.count)
        var held: Int?
        for (index, item) in log.entries.enumerated() {
            let heldBefore = held
            switch tracker.add(item.fix, now: item.received) {
            case .accepted(let progress): splits += progress.splits
            case .rejected(let reason): verdicts[index] = reason
            case .held: held = index
            }
            if tracker.droppedStart != nil, let dropped = heldBefore { verdicts[dropped] = .stale }
        }
        guard let started = tracker.startedAt, let newest = tracker.lastAcceptedTimestamp,
              let snapshot = tracker.snapshot else { return }
        for (index, item) in log.entries.enumerated() where item.rejection != verdicts[index] {
            run.log?.setRejection(verdicts[index], at: index)
            store.submit(.fix(StoredFix(runID: runID, sequence: item.sequence, fix: item.fix, received: item.received,
                                        rejection: verdicts[index]), acknowledgement: nil))
        }
        let before = run.tracker.runAwards
        run.tracker = tracker
        run.heldStart = nil
        if started != oldStart {
            run.phase = .running(id: runID, started: started)
            store.submit(.runStarted(id: runID, runner: entry.name, started: started))
            run.startedLine = Self.line(RunStartedEvent(runner: entry.name, runID: runID,
                                                        timestamp: Self.timestampText(started)))
        }
        var reached: [BadgeAward] = []
        for award in tracker.runAwards {
            if let old = before.first(where: { $0.badge.id == award.badge.id && $0.tier == award.tier }) {
                if old != award { store.submit(.award(StoredAward(runner: entry.name, runID: runID, award: award))) }
            } else {
                reached.append(award)
            }
        }
        let progress = RunProgress(started: false, snapshot: snapshot, awards: reached,
                                   splits: Array(splits.dropFirst(run.announcedSplits)))
        run.catchUpAt = now
        announce(progress, runner: entry.name, timestampText: Self.timestampText(newest), in: entry, at: newest,
                 catchingUp: true)
        effects.log("run \(runID) of \(entry.name) measured again from \(log.entries.count) fixes in time order: \(Int(snapshot.distance)) m")
    }
}
