import Foundation
import RunCore
import RunStore
import Wire

extension Hub {
    /// `help:`: one line per command, then `done:help`.
    func answerHelp(_ id: ConnectionID) {
        for line in HelpEvent.standard { send(line, to: id) }
        send(DoneEvent(what: "help", count: HelpEvent.standard.count, more: false), to: id)
    }

    /// `stats:`: the operator's counters on one line.
    func answerStatistics(_ id: ConnectionID) {
        effects.answerStatistics(to: id)
    }

    /// The operator's counters, named as `stats:` names them (also the source of `GET /metrics`).
    /// Adds another loop's counters into `counters`, except `live_runs`, which every loop knows whole.
    package static func add(_ other: [(String, Int)], to counters: inout [(String, Int)]) {
        for (index, counter) in counters.enumerated() where counter.0 != "live_runs" {
            counters[index].1 += other.first { $0.0 == counter.0 }?.1 ?? 0
        }
    }

    /// The operator's counters of this loop (all of them with one loop), with `connections`, what only the
    /// driver counts (accepted, refused, conflated, slow), in their place.
    ///
    /// Anyone may ask (`stats:`, `GET /metrics`): a private runner is counted nowhere in them as a runner, so
    /// `live_runs` is what the leaderboard shows and no count moves when a private run starts. Its connection
    /// is one without a role (`other`).
    package func statisticsCounters(connections: [(String, Int)]) -> [(String, Int)] {
        var runnerConnections = 0, spectators = 0, coachConnections = 0, idle = 0
        for session in sessions.values {
            var role = false
            if let name = session.name, !isPrivate(name), runners[name]?.run != nil, runners[name]?.connection != nil {
                runnerConnections += 1
                role = true
            }
            if session.isSpectator { spectators += 1; role = true }
            if session.isCoach { coachConnections += 1; role = true }
            if !role { idle += 1 }
        }
        let live = visibleLiveRunnerNames(for: nil).count
        var counters: [(String, Int)] = [
            ("connections", sessions.count), ("runners", runnerConnections), ("spectators", spectators),
            ("coaches", coachConnections), ("other", idle), ("live_runs", live),
            ("runs_started", statistics.runsStarted), ("fixes_accepted", statistics.fixesAccepted),
            ("fixes_filtered", statistics.fixesFiltered.values.reduce(0, +)),
        ]
        for reason in FixRejection.allCases {
            counters.append(("filtered_\(reason.rawValue)", statistics.fixesFiltered[reason] ?? 0))
        }
        counters += [
            ("fixes_resent", statistics.fixesResent), ("fixes_late", statistics.fixesLate), ("events_sent", statistics.eventsSent),
        ]
        counters += connections
        counters.append(("errors_sent", statistics.errorsSent))
        return counters
    }

    /// `runs:NAME OFFSET LIMIT`: item lines newest first, then `done:runs count=N more=yes|no`.
    func answerRuns(_ id: ConnectionID, name: String, offset: Int, limit: Int) {
        guard knows(name, for: id) else { return }
        let page = min(max(limit, 1), configuration.maximumHistoryPage)
        // The store's row of a live run holds no measurements yet: the live tracker's latest ones stand in.
        let live = liveRun(of: name)
        effects.answerFromStore(to: id) { store throws(StoreError) in
            let found = try store.runs(of: name, offset: offset, limit: page + 1)
            return found.prefix(page).map { stored in Self.line(RunListItemEvent(live?.standing(in: stored) ?? stored)) }
                + [Self.line(DoneEvent(what: "runs", count: min(found.count, page), more: found.count > page))]
        }
    }

    /// `run:ID`: the summary, km and mile splits, checkpoint splits and badges, then `done:run`.
    func answerRun(_ id: ConnectionID, runID: Int64) {
        // A private runner's live run is looked up in the store like any other id, and refused there as missing.
        if let name = runOwners[runID], mayFollow(name, id), let run = liveRun(of: name), run.runID == runID {
            // A live run is measured off the loop from its stored fixes (the store is flushed first), through
            // the same engine: no copy of the live engine, whose track would be copied at its next fix.
            // Refusals before the first accepted fix are counted live but never stored: take the live count.
            let history = run.startHistory, configuration = configuration.tracker, rejections = run.rejections
            let started = run.started
            let zoneMetres = sessions[id]?.name == name ? 0 : runners[name]?.privacy.zone ?? 0
            effects.answerFromStore(to: id) { store throws(StoreError) in
                let summary = try Self.replay(runID, from: store, configuration: configuration, history: history)
                let record = RunRecord(id: runID, runner: name, started: started, ended: nil,
                                       distance: summary.distance, elapsed: summary.elapsed,
                                       movingTime: summary.movingTime, status: .live, rejections: rejections,
                                       elevationGain: summary.elevationGain, elevationLoss: summary.elevationLoss)
                let awards = summary.awards.map { StoredAward(runner: name, runID: runID, award: $0) }
                let run = StoredRun(record: record, splits: summary.splits, checkpoints: summary.checkpoints, awards: awards)
                guard zoneMetres > 0 else { return Self.lines(describing: run) }
                // Live, the run's end is where the runner is now: pins near it are hidden as the ends are.
                let ends = [summary.track.first, summary.track.last].compactMap { $0?.coordinate }
                return Self.lines(describing: run) { award in
                    BadgeEvent(award, runner: name, hiddenBy: PrivacyZone(metres: zoneMetres), total: summary.distance,
                               ends: ends)
                }
            }
            return
        }
        let visible = privateRunnersVisible(to: id), viewer = sessions[id]?.name
        effects.answerFromStore(to: id) { store throws(StoreError) in
            guard let (stored, owner) = try Self.readableRun(runID, visible: visible, in: store) else {
                return [Self.line(ErrorEvent(code: .notFound, reason: "no run \(runID)"))]
            }
            // Badge pins inside a privacy zone are for the runner only.
            guard viewer != stored.record.runner, let zone = PrivacyZone(owner.privacy) else {
                return Self.lines(describing: stored)
            }
            let fixes = try store.fixesInTimeOrder(ofRun: runID).filter(\.isAccepted)
            let ends = [fixes.first, fixes.last].compactMap { $0?.fix.coordinate }
            return Self.lines(describing: stored) { award in
                BadgeEvent(award, runner: stored.record.runner, hiddenBy: zone, total: stored.record.distance, ends: ends)
            }
        }
    }

    /// Off the loop: run `id` with its owner, nil for a run nobody has (unknown or discarded) and for a private
    /// runner's run unless the runner is among the `visible` ones. A refusal makes the same one read whichever
    /// it is (the owner, in one query), so the time of the answer does not tell a private run from no run.
    package static func readableRun(_ id: Int64, visible: Set<String>,
                            in store: any RunStore) throws(StoreError) -> (run: StoredRun, owner: RunOwner)? {
        guard let owner = try store.owner(ofRun: id), owner.may(beReadBy: visible),
              let run = try store.run(id: id) else { return nil }
        return (run, owner)
    }

    /// Off the loop: runner `name` as stored, nil for a name nobody has and for a private runner unless it is
    /// among the `visible` ones; one read whichever it is.
    package static func readableRunner(_ name: String, visible: Set<String>,
                               in store: any RunStore) throws(StoreError) -> RunnerRecord? {
        guard let record = try store.runner(named: name),
              RunOwner(runner: name, privacy: record.privacy).may(beReadBy: visible) else { return nil }
        return record
    }

    /// A run's summary measured again from its stored fixes, as it was measured live (each fix judged at the
    /// time it was received).
    package static func replay(_ runID: Int64, from store: any RunStore, configuration: TrackerConfiguration,
                       history: BadgeHistory) throws(StoreError) -> RunSummary {
        var tracker = RunTracker(configuration: configuration, history: history)
        for stored in try store.fixesInTimeOrder(ofRun: runID) { _ = tracker.add(stored.fix, now: stored.received) }
        return tracker.finish()
    }

    private static func lines(describing run: StoredRun,
                              badge: ((BadgeAward) -> BadgeEvent)? = nil) -> [[UInt8]] {
        let name = run.record.runner
        var lines = [line(RunSummaryEvent(run.record))]
        lines += run.splits.map { line(SplitEvent($0, runner: name)) }
        lines += run.checkpoints.map { line(CheckpointEvent($0, runner: name)) }
        lines += run.awards.map { line(badge?($0.award) ?? BadgeEvent($0.award, runner: name)) }
        lines.append(line(DoneEvent(what: "run", count: lines.count, more: false)))
        return lines
    }

    /// `badges:NAME`: the board of all 33 badges, then `done:badges`.
    func answerBadges(_ id: ConnectionID, name: String) {
        guard knows(name, for: id), let entry = runners[name] else { return }
        // The history and a live run's distance belong to the loop: copied now, used off the loop.
        let history = entry.history
        let live = liveRun(of: name)?.distance ?? 0
        effects.answerFromStore(to: id) { store throws(StoreError) in
            let farthest = max(live, try store.farthestDistance(of: name))
            return Badges.all.map { badge in
                Self.line(BoardEvent(badge: badge, runner: name, record: history.records[badge.id], farthest: farthest))
            } + [Self.line(DoneEvent(what: "badges", count: Badges.all.count, more: false))]
        }
    }

    /// One event formatted once, as a line with its newline, through the event's own (fast) formatter.
    package static func line(_ event: some WireEvent) -> [UInt8] {
        var bytes: [UInt8] = []
        event.append(to: &bytes)
        return bytes
    }

    /// True when the runner exists; otherwise answers `err:not_found`.
    private func knows(_ name: String, for id: ConnectionID) -> Bool {
        guard let lookup = runnerEntry(named: name, for: id) else { return false }
        // A private runner is, to those who may not see it, a name nobody has: the same answer.
        guard lookup != nil, mayFollow(name, id) else {
            fail(id, .notFound, "no runner \(name)")
            return false
        }
        return true
    }

    /// The private runners connection `id` may see anyway (itself, its share links), for a read made off the
    /// loop that finds out whose run it is only there.
    func privateRunnersVisible(to id: ConnectionID) -> Set<String> {
        guard let session = sessions[id] else { return [] }
        var names = Set(session.grants.keys.filter { mayFollow($0, id) })
        if let name = session.name { names.insert(name) }
        return names
    }
}
