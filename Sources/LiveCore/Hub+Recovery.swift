import RunCore
import RunStore
import Wire

extension Hub {
    /// After a crash: every run the store still has as live is rebuilt by replaying its stored fixes through a
    /// fresh engine (same fixes, same receive clock, so the same distance), then waits for its runner to resume
    /// with the key, or for the resume window to end it.
    package func recoverLiveRuns(now: Double) {
        let live: [RunRecord]
        do {
            live = try store.liveRuns()
        } catch {
            effects.log("recovery: cannot list live runs: \(error)")
            return
        }
        for record in live where ownsRunner(record.runner) {
            do {
                try recover(record, now: now)
            } catch {
                effects.log("recovery: run \(record.id) of \(record.runner) not recovered: \(error)")
            }
        }
    }

    private func recover(_ record: RunRecord, now: Double) throws(StoreError) {
        guard let runner = try store.runner(named: record.runner) else {
            effects.log("recovery: run \(record.id) has no runner \(record.runner)")
            return
        }
        rebuild(record, runner: runner, fixes: try store.fixesInTimeOrder(ofRun: record.id), now: now)
        effects.log("recovered run \(record.id) of \(runner.name): \(Int(runners[runner.name]?.run?.tracker.snapshot?.distance ?? 0)) m; waiting for resume")
    }

    /// A run another node measured until it died (its lease is this node's now): rebuilt from its stored fixes
    /// as after a crash, then resumed by the `iam:` that asked for it.
    package func takeOver(_ record: RunRecord, runner: RunnerRecord, fixes: [StoredFix], now: Double) {
        remoteRuns[runner.name] = nil  // stays on the board: the rebuilt run's paces move it on
        rebuild(record, runner: runner, fixes: fixes, now: now)
        effects.log("took over run \(record.id) of \(runner.name): \(Int(runners[runner.name]?.run?.tracker.snapshot?.distance ?? 0)) m")
    }

    /// A run whose node died and whose runner did not come back to any node within the resume window: rebuilt
    /// from its stored fixes (its followers everywhere hear its end as from its own node), then ended, saved as
    /// timed out, as a run whose runner stayed away ends on one server.
    package func endAbandoned(_ record: RunRecord, runner: RunnerRecord, fixes: [StoredFix], now: Double) {
        assertOnLoop()
        takeOver(record, runner: runner, fixes: fixes, now: now)
        guard let entry = runners[runner.name], entry.run != nil else { return }
        finish(entry, status: .timedOut, reason: .timeout, now: now)
    }

    /// A live run from its stored fixes: the same fixes and receive clock through a fresh engine give the same
    /// distance; the other loops (and nodes) learn of it as a catch-up.
    private func rebuild(_ record: RunRecord, runner: RunnerRecord, fixes: [StoredFix], now: Double) {
        let entry = runners[runner.name] ?? remember(runner)
        let run = LiveRun(tracker: RunTracker(configuration: configuration.tracker.keepingTrack(false),
                                              history: entry.history))
        run.phase = .running(id: record.id, started: record.started)
        // A privacy zone's delay is rebuilt too: what others see of the rebuilt run is what they saw before.
        run.zoneDelay = entry.privacy.zone > 0 ? PrivacyZone.Delay(PrivacyZone(metres: entry.privacy.zone)) : nil
        var lastProgress: RunProgress?
        var lastAccepted: Fix?
        var shown: Coordinate?
        // In time order (see ``RunStore/fixesInTimeOrder(ofRun:)``), as the run was measured; the log lets
        // positions that arrive late from now on be measured in their place too.
        var log = RunLog()
        for stored in fixes {
            log.insert(RunLog.Entry(fix: stored.fix, received: stored.received, sequence: stored.sequence,
                                    rejection: stored.rejection))
            if case .accepted(let progress) = run.tracker.add(stored.fix, now: stored.received) {
                lastProgress = progress
                lastAccepted = stored.fix
                shown = run.zoneDelay?.shown(progress.snapshot.coordinate, at: progress.snapshot.distance)
                run.announcedSplits += progress.splits.count
                run.badgeLines += progress.awards.map { award in
                    var badge = BadgeEvent(award, runner: runner.name)
                    if run.zoneDelay != nil { (badge.latitude, badge.longitude) = (nil, nil) }
                    return Self.line(badge)
                }
            }
            run.nextSequence = max(run.nextSequence, stored.sequence + 1)
            if isAcknowledgeable(stored.fix.timestamp, now: stored.received),
               run.newestSubmitted.map({ stored.fix.timestamp > $0.timestamp }) ?? true {
                run.newestSubmitted = (stored.fix.timestamp, Self.timestampText(stored.fix.timestamp))
            }
        }
        run.log = log
        run.committedSequence = run.nextSequence - 1
        guard let started = run.tracker.startedAt else {
            // Only a held stale fix so far: the next fix still decides whether it starts the run.
            run.phase = .holding(id: record.id)
            if let held = run.tracker.heldStart, let stored = fixes.last(where: { $0.fix == held }) {
                run.heldStart = (held, stored.sequence, stored.received, Self.timestampText(held.timestamp))
            }
            run.disconnectedAt = now
            entry.run = run
            runOwners[record.id] = runner.name
            return
        }
        run.phase = .running(id: record.id, started: started)
        // A run whose first positions came late starts earlier than its row said before the crash.
        if started != record.started { store.submit(.runStarted(id: record.id, runner: runner.name, started: started)) }
        // Everything replayed came from disk, so it is all acknowledged.
        run.committedAcknowledgement = run.newestSubmitted?.text
        run.disconnectedAt = now
        run.startedLine = Self.line(RunStartedEvent(runner: runner.name, runID: record.id,
                                                    timestamp: Self.timestampText(started)))
        if let lastProgress, let lastAccepted {
            var pace = PaceEvent(lastProgress.snapshot, runner: runner.name,
                                 timestamp: Self.timestampText(lastAccepted.timestamp))
            if run.zoneDelay != nil { (pace.latitude, pace.longitude) = (shown?.latitude, shown?.longitude) }
            run.latestPaceLine = Self.line(pace)
        }
        run.offPace = offPaceMonitor(for: entry.goal)
        entry.run = run
        runOwners[record.id] = runner.name
        if let snapshot = run.tracker.snapshot {
            run.lastAnnounced = (snapshot.distance, snapshot.elapsed)
            rank(runner.name, distance: snapshot.distance, elapsed: snapshot.elapsed, moving: snapshot.movingTime,
                 goal: entry.goal?.distance)
        } else {
            rank(runner.name, distance: 0, elapsed: 0, moving: 0, goal: entry.goal?.distance)
        }
        announceRecovered(run, runner: runner.name, runID: record.id, started: started)
    }

    /// With several loops (or nodes), the others learn of a recovered run as of a live one: its start, badges
    /// and pace, as a catch-up their followers do not hear again (or, `asSnapshot`, do: see
    /// ``resendToOtherNodes(_:now:)``).
    private func announceRecovered(_ run: LiveRun, runner name: String, runID: Int64, started: Double,
                                   asSnapshot: Bool = false) {
        guard let sequence = sharedSequence, let startedLine = run.startedLine else { return }
        func relay(_ line: [UInt8], _ audience: Audience, _ kind: RelayedEvent.Kind) {
            var event = RelayedEvent(runner: name, line: line, audience: audience, sequence: sequence(), kind: kind,
                                     isCatchUp: true)
            event.isSnapshot = asSnapshot
            effects.relay(.event(event))
        }
        relay(startedLine, .everyone, .started(runID: runID, started: started, startHistory: run.startHistory))
        for badge in run.badgeLines { relay(badge, .everyone, .badge) }
        for point in run.pointLines { relay(point, .everyone, .point) }
        if let pace = run.latestPaceLine, let snapshot = run.tracker.snapshot {
            relay(pace, .spectators, .pace(distance: snapshot.distance, elapsed: snapshot.elapsed,
                                           movingTime: snapshot.movingTime, rejections: run.tracker.rejections,
                                           goal: runners[name]?.goal?.distance, course: run.course?.course.name))
        }
    }

    /// Some of `name`'s events never reached the other nodes (their bus queue was full): they get the live run
    /// as it stands (its start, badges, points and latest pace) as a snapshot, which their mirrors take as a
    /// catch-up and their followers of the runner as a late joiner's; a run that ended meanwhile, its `end:`
    /// again (while it is among the last ends kept for the overview).
    package func resendToOtherNodes(_ name: String, now: Double) {
        assertOnLoop()
        if let run = runners[name]?.run, case .running(let runID, let started) = run.phase {
            return announceRecovered(run, runner: name, runID: runID, started: started, asSnapshot: true)
        }
        guard let sequence = sharedSequence,
              let line = recentlyEnded.last(where: { Self.subject(of: $0) == name && $0.starts(with: Self.endPrefix) }),
              let end = try? RunEndedEvent(event: Event.parse(String(decoding: line.dropLast(), as: UTF8.self))) else { return }
        var event = RelayedEvent(runner: name, line: line, audience: .everyone, sequence: sequence(),
                                 kind: .ended(runID: end.runID), isCatchUp: true)
        event.isSnapshot = true
        effects.relay(.event(event))
    }

    /// What an `end:` line starts with.
    private static let endPrefix = Array("end:".utf8)

    /// A stored timestamp as text for `ack:`/`ts=` when the runner's own text is not known (after a restart).
    static func timestampText(_ timestamp: Double) -> String {
        timestamp == timestamp.rounded() && abs(timestamp) < 1e15 ? String(Int64(timestamp)) : String(timestamp)
    }
}
