import RunCore
import RunStore
import Wire

/// What a `replay:` needs of a saved run, read off the loop: the run, its fixes and awards, and what the asker
/// may see of it.
struct ReplaySource: Sendable {
    let run: StoredRun
    let fixes: [StoredFix]
    /// The runner's privacy zone when the asker is someone else (0 for none).
    let zone: Double
}

/// One connection's replay of a saved run, `speed` times faster than it was run: the run's events made again
/// as the fixes come due (the same engine as live, so the same paces and splits; badges as they were
/// awarded), never all at once. Keeps the run's fixes and one engine, whatever its length. Loop thread only.
final class Replay {
    let runner: String
    let runID: Int64
    let speed: Double
    /// Server clock when the replay began.
    let began: Double
    private let source: ReplaySource
    private let first: Double
    /// The run's accepted fixes, in order. Refused ones make no line, and their times must not set the pace: a
    /// refused stamp far ahead (`future`) would hold back every fix after it.
    private let fixes: [StoredFix]
    private var tracker: RunTracker
    private var zone: PrivacyZone.Delay?
    private var nextFix = 0
    private var nextAward = 0
    private var hasStarted = false
    /// Lines sent so far (for `done:replay count=N`).
    private(set) var sent = 0

    init(_ source: ReplaySource, speed: Double, now: Double, configuration: TrackerConfiguration) {
        runner = source.run.record.runner
        runID = source.run.record.id
        self.speed = speed
        self.source = source
        began = now
        fixes = source.fixes.filter(\.isAccepted)
        first = fixes.first?.fix.timestamp ?? source.run.record.started
        tracker = RunTracker(configuration: configuration.keepingTrack(false))
        zone = source.zone > 0 ? PrivacyZone.Delay(PrivacyZone(metres: source.zone)) : nil
    }

    /// The server-clock time at which run time `time` (a fix's unix time) is replayed.
    private func due(_ time: Double) -> Double { began + (time - first) / speed }

    /// When the next line is due; nil once the replay is over.
    var nextDue: Double? {
        if !hasStarted { return began }
        let fix = nextFix < fixes.count ? due(fixes[nextFix].fix.timestamp) : nil
        let award = nextAward < source.run.awards.count ? due(source.run.awards[nextAward].award.timestamp) : nil
        switch (fix, award) {
        case (let fix?, let award?): return min(fix, award)
        case (let fix?, nil): return fix
        case (nil, let award?): return award
        case (nil, nil): return isOver ? nil : began  // the end is due at once after the last fix
        }
    }

    private var isOver = false

    /// The lines due by `now`, in order (with their `pace:` marked droppable), the last ones `end:` and
    /// `done:replay` when the run is over.
    func lines(dueBy now: Double) -> [(line: [UInt8], isPace: Bool)] {
        var lines: [(line: [UInt8], isPace: Bool)] = []
        if !hasStarted {
            hasStarted = true
            lines.append((Hub.line(RunStartedEvent(runner: runner, runID: runID, timestamp: Hub.timestampText(first))), false))
        }
        while true {
            let fixDue = nextFix < fixes.count ? due(fixes[nextFix].fix.timestamp) : .infinity
            let awardDue = nextAward < source.run.awards.count ? due(source.run.awards[nextAward].award.timestamp) : .infinity
            guard min(fixDue, awardDue) <= now else { break }
            if awardDue < fixDue {
                var badge = BadgeEvent(source.run.awards[nextAward].award, runner: runner)
                if zone != nil { (badge.latitude, badge.longitude) = (nil, nil) }
                lines.append((Hub.line(badge), false))
                nextAward += 1
                continue
            }
            let stored = fixes[nextFix]
            nextFix += 1
            guard case .accepted(let progress) = tracker.add(stored.fix, now: stored.received) else {
                continue
            }
            var pace = PaceEvent(progress.snapshot, runner: runner, timestamp: Hub.timestampText(stored.fix.timestamp))
            if zone != nil {
                let shown = zone?.shown(progress.snapshot.coordinate, at: progress.snapshot.distance)
                (pace.latitude, pace.longitude) = (shown?.latitude, shown?.longitude)
            }
            lines.append((Hub.line(pace), true))
            for split in progress.splits { lines.append((Hub.line(SplitEvent(split, runner: runner)), false)) }
        }
        if nextFix >= fixes.count, nextAward >= source.run.awards.count, !isOver {
            isOver = true
            let record = source.run.record
            var filtered: [String: Int] = [:]
            for (reason, count) in record.rejections { filtered[reason.rawValue] = count }
            // A discarded run is not in history, so never replayed: every run here was kept.
            let reason: RunEndReason = record.status == .timedOut ? .timeout : .stop
            lines.append((Hub.line(RunEndedEvent(runner: runner, runID: runID, distance: record.distance,
                                                 elapsed: record.elapsed, moving: record.movingTime,
                                                 pace: record.averagePace, saved: true,
                                                 reason: reason, filtered: filtered)), false))
            sent += lines.count
            lines.append((Hub.line(DoneEvent(what: "replay", count: sent, more: false)), false))
            return lines
        }
        sent += lines.count
        return lines
    }
}
