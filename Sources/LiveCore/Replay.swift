import RunCore
import RunStore
import Wire

/// What a `replay:` needs of a saved run, read off the loop: the run and its awards (small: kept whole), its
/// first page of fixes and the timeline that reads the next, and what the asker may see of it.
package struct ReplaySource: Sendable {
    let run: StoredRun
    /// The run's first accepted fixes, in time order (one page).
    let fixes: [StoredFix]
    /// Where the next pages come from.
    let timeline: FixTimeline
    /// The runner's privacy zone when the asker is someone else (0 for none).
    let zone: Double
}

/// A replay's next fixes, read off the loop, and the timeline after them.
package struct ReplayPage: Sendable {
    let fixes: [StoredFix]
    let timeline: FixTimeline
}

/// One connection's replay of a saved run, `speed` times faster than it was run: the run's events made again
/// as the fixes come due (the same engine as live, so the same paces and splits; badges as they were
/// awarded), never all at once. Holds at most two pages of the run's fixes, whatever its length: the one being
/// replayed and the next, asked for off the loop while fewer than a page are left (``needsFixes``). Loop
/// thread only.
final class Replay {
    let runner: String
    let runID: Int64
    let speed: Double
    /// Server clock when the replay began.
    let began: Double
    /// Fixes read at once; fewer than this left to replay asks for the next page. Also the most fixes one
    /// call of ``lines(dueBy:)`` replays, so a fast replay far behind takes turns with the loop's other work.
    let pageSize: Int
    private let run: StoredRun
    private let first: Double
    /// The run's accepted fixes read and not yet replayed, from `nextFix`, in time order. Refused ones make no
    /// line, and their times must not set the pace: a refused stamp far ahead (`future`) would hold back every
    /// fix after it.
    private var window: [StoredFix]
    private var nextFix = 0
    /// Reads the next pages; nil while one is being read (the read has it).
    private var timeline: FixTimeline?
    private var tracker: RunTracker
    private var zone: PrivacyZone.Delay?
    private var nextAward = 0
    private var hasStarted = false
    /// Set once `end:` and `done:replay` are made: the replay can go.
    private(set) var isOver = false
    /// Lines sent so far (for `done:replay count=N`).
    private(set) var sent = 0
    /// The most fixes the replay held at once (tests check it stays within two pages).
    private(set) var largestWindow: Int

    init(_ source: ReplaySource, speed: Double, now: Double, configuration: TrackerConfiguration, pageSize: Int) {
        runner = source.run.record.runner
        runID = source.run.record.id
        self.speed = speed
        self.pageSize = max(1, pageSize)
        run = source.run
        began = now
        window = source.fixes
        largestWindow = window.count
        timeline = source.timeline
        first = window.first?.fix.timestamp ?? source.run.record.started
        tracker = RunTracker(configuration: configuration.keepingTrack(false))
        zone = source.zone > 0 ? PrivacyZone.Delay(PrivacyZone(metres: source.zone)) : nil
    }

    /// True while fixes are left to read: being read now, or not asked for yet.
    private var hasMoreToRead: Bool { timeline.map { !$0.isFinished } ?? true }

    /// True when the next page should be asked for now: fewer than a page left, more in the store, and no read
    /// going.
    var needsFixes: Bool {
        guard let timeline, !timeline.isFinished else { return false }
        return window.count - nextFix < pageSize
    }

    /// The timeline, handed to the read of the next page (nil when one is going already).
    func takeTimeline() -> FixTimeline? {
        defer { timeline = nil }
        return timeline
    }

    /// The next page arrived: the fixes replayed already are let go.
    func received(_ page: ReplayPage) {
        window = Array(window[nextFix...]) + page.fixes
        nextFix = 0
        timeline = page.timeline
        largestWindow = max(largestWindow, window.count)
    }

    /// The server-clock time at which run time `time` (a fix's unix time) is replayed.
    private func due(_ time: Double) -> Double { began + (time - first) / speed }

    /// When the next line is due; nil once the replay is over, and while it waits for its next page (whose
    /// arrival asks for the replays again).
    var nextDue: Double? {
        if !hasStarted { return began }
        let fix = nextFix < window.count ? due(window[nextFix].fix.timestamp) : nil
        if fix == nil && hasMoreToRead { return nil }
        let award = nextAward < run.awards.count ? due(run.awards[nextAward].award.timestamp) : nil
        switch (fix, award) {
        case (let fix?, let award?): return min(fix, award)
        case (let fix?, nil): return fix
        case (nil, let award?): return award
        case (nil, nil): return isOver ? nil : began  // the end is due at once after the last fix
        }
    }

    /// The lines due by `now`, in order (with their `pace:` marked droppable), the last ones `end:` and
    /// `done:replay` when the run is over. At most a page of fixes and awards per call: the rest, due already,
    /// makes ``nextDue`` now.
    func lines(dueBy now: Double) -> [(line: [UInt8], isPace: Bool)] {
        var lines: [(line: [UInt8], isPace: Bool)] = []
        if !hasStarted {
            hasStarted = true
            lines.append((Hub.line(RunStartedEvent(runner: runner, runID: runID, timestamp: Hub.timestampText(first))), false))
        }
        var replayed = 0
        while replayed < pageSize {
            // Past the fixes read, the next one is not known yet: no award may go before it does.
            guard nextFix < window.count || !hasMoreToRead else { break }
            let fixDue = nextFix < window.count ? due(window[nextFix].fix.timestamp) : .infinity
            let awardDue = nextAward < run.awards.count ? due(run.awards[nextAward].award.timestamp) : .infinity
            guard min(fixDue, awardDue) <= now else { break }
            replayed += 1
            if awardDue < fixDue {
                var badge = BadgeEvent(run.awards[nextAward].award, runner: runner)
                if zone != nil { (badge.latitude, badge.longitude) = (nil, nil) }
                lines.append((Hub.line(badge), false))
                nextAward += 1
                continue
            }
            let stored = window[nextFix]
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
        if nextFix >= window.count, !hasMoreToRead, nextAward >= run.awards.count, !isOver {
            isOver = true
            let record = run.record
            var filtered: [String: Int] = [:]
            for (reason, count) in record.rejections { filtered[reason.rawValue] = count }
            // A discarded run is not in history, so never replayed: every run here was kept.
            let reason: RunEndReason = record.status == .timedOut ? .timeout : .stop
            lines.append((Hub.line(RunEndedEvent(runner: runner, runID: runID, distance: record.distance,
                                                 elapsed: record.elapsed, moving: record.movingTime,
                                                 pace: record.averagePace, saved: true,
                                                 reason: reason, filtered: filtered,
                                                 elevationGain: record.elevationGain,
                                                 elevationLoss: record.elevationLoss)), false))
            sent += lines.count
            lines.append((Hub.line(DoneEvent(what: "replay", count: sent, more: false)), false))
            return lines
        }
        sent += lines.count
        return lines
    }
}
