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
        var runnerConnections = 0, spectators = 0, coachConnections = 0, idle = 0
        for session in sessions.values {
            var role = false
            if let name = session.name, runners[name]?.run != nil, runners[name]?.connection != nil {
                runnerConnections += 1
                role = true
            }
            if session.isSpectator { spectators += 1; role = true }
            if session.isCoach { coachConnections += 1; role = true }
            if !role { idle += 1 }
        }
        let live = runners.values.filter { $0.run?.id != nil }.count
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
            ("fixes_resent", statistics.fixesResent), ("events_sent", statistics.eventsSent),
            ("events_conflated", statistics.eventsConflated), ("slow_closed", statistics.slowClientsClosed),
            ("accepted_total", statistics.connectionsAccepted), ("refused_busy", statistics.connectionsRefused),
            ("errors_sent", statistics.errorsSent),
        ]
        send(StatsEvent(counters), to: id)
    }

    /// `runs:NAME OFFSET LIMIT`: item lines newest first, then `done:runs count=N more=yes|no`.
    func answerRuns(_ id: ConnectionID, name: String, offset: Int, limit: Int) {
        guard knows(name, for: id) else { return }
        let page = min(max(limit, 1), configuration.maximumHistoryPage)
        do {
            let found = try store.runs(of: name, offset: offset, limit: page + 1)
            for record in found.prefix(page) {
                send(RunListItemEvent(record), to: id)
            }
            send(DoneEvent(what: "runs", count: min(found.count, page), more: found.count > page), to: id)
        } catch {
            storageFailed(id, error)
        }
    }

    /// `run:ID`: the summary, km and mile splits, checkpoint splits and badges, then `done:run`.
    func answerRun(_ id: ConnectionID, runID: Int64) {
        do {
            if let name = runOwners[runID], let entry = runners[name], let run = entry.run,
               case .running(let liveID, let started) = run.phase, liveID == runID {
                // A live run is answered from the engine: the store has only its fixes so far.
                let summary = run.tracker.finish()
                let record = RunRecord(id: runID, runner: name, started: started, ended: nil, distance: summary.distance,
                                       elapsed: summary.elapsed, movingTime: summary.movingTime, status: .live,
                                       rejections: summary.rejections)
                let awards = summary.awards.map { StoredAward(runner: name, runID: runID, award: $0) }
                answer(id, StoredRun(record: record, splits: summary.splits, checkpoints: summary.checkpoints, awards: awards))
            } else if let stored = try store.run(id: runID) {
                answer(id, stored)
            } else {
                fail(id, .notFound, "no run \(runID)")
            }
        } catch {
            storageFailed(id, error)
        }
    }

    private func answer(_ id: ConnectionID, _ run: StoredRun) {
        let name = run.record.runner
        send(RunSummaryEvent(run.record), to: id)
        for split in run.splits { send(SplitEvent(split, runner: name), to: id) }
        for checkpoint in run.checkpoints { send(CheckpointEvent(checkpoint, runner: name), to: id) }
        for award in run.awards { send(BadgeEvent(award.award, runner: name), to: id) }
        let count = 1 + run.splits.count + run.checkpoints.count + run.awards.count
        send(DoneEvent(what: "run", count: count, more: false), to: id)
    }

    /// `badges:NAME`: the board of all 33 badges, then `done:badges`.
    func answerBadges(_ id: ConnectionID, name: String) {
        guard knows(name, for: id), let entry = runners[name] else { return }
        do {
            var farthest = try store.runs(of: name, offset: 0, limit: Int(Int32.max))
                .filter { $0.status != .discarded }.map(\.distance).max() ?? 0
            if let live = entry.run?.tracker.snapshot { farthest = max(farthest, live.distance) }
            for badge in Badges.all {
                send(BoardEvent(badge: badge, runner: name, record: entry.history.records[badge.id],
                                farthest: farthest), to: id)
            }
            send(DoneEvent(what: "badges", count: Badges.all.count, more: false), to: id)
        } catch {
            storageFailed(id, error)
        }
    }

    /// True when the runner exists; otherwise answers `err:not_found`.
    private func knows(_ name: String, for id: ConnectionID) -> Bool {
        guard let lookup = runnerEntry(named: name, for: id) else { return false }
        guard lookup != nil else {
            fail(id, .notFound, "no runner \(name)")
            return false
        }
        return true
    }

    private func storageFailed(_ id: ConnectionID, _ error: StoreError) {
        fail(id, .storage, "storage: \(error.message)")
        output.log("store read failed: \(error)")
    }
}
