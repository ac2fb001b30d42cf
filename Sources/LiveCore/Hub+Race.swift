import RunCore
import Wire

// Racing: goals and predicted finishes, coach alerts (off pace, checkpoints) and the leaderboard.

extension Hub {
    // MARK: Goals

    /// `goal:DISTANCE [TARGET [MARGIN]]` / `goal:off` from the runner's identified connection: for the live run
    /// (or the next) and the runs after, until changed.
    func setGoal(_ goal: GoalCommand?, for id: ConnectionID) {
        guard let entry = ownEntry(id, for: "goal", asking: "iam:NAME") else { return }
        let name = entry.name
        var goal = goal
        if let metres = goal?.distance { goal?.distance = Self.goalDistance(metres) }
        entry.goal = goal
        entry.run?.offPace = offPaceMonitor(for: goal)
        guard let goal else {
            send(OkEvent(what: "goal", fields: [Event.Field(key: "cleared", value: "yes", shape: .flag)]), to: id)
            effects.log("runner \(name) cleared the goal")
            return
        }
        let targetPace = goal.targetTime.map { $0 / goal.distance * 1000 }
        send(OkEvent(what: "goal", fields: [
            .number("dist", goal.distance, NumberFormat.distanceDecimals),
            .number("target", goal.targetTime, NumberFormat.timeDecimals),
            .number("pace", targetPace, NumberFormat.paceDecimals),
            .number("margin", goal.targetTime == nil ? nil : goal.marginPercent ?? GoalCommand.defaultMargin, 1),
        ]), to: id)
        effects.log("runner \(name) set a goal of \(Int(goal.distance)) m")
    }

    /// The pace watch a goal asks for: only a goal with a target time has a target pace.
    func offPaceMonitor(for goal: GoalCommand?) -> OffPaceMonitor? {
        guard let goal, let target = goal.targetTime else { return nil }
        return OffPaceMonitor(targetPace: target / goal.distance * 1000,
                              margin: (goal.marginPercent ?? GoalCommand.defaultMargin) / 100,
                              hold: configuration.offPaceHold)
    }

    /// `eta=`, `finish=`, `next_eta=` of a runner with a goal; `time` is the fix's unix time.
    /// The goal's target pace (when it has a target time) steadies the early predictions, the next badge's too.
    static func forecast(_ goal: GoalCommand, _ snapshot: RunSnapshot, at time: Double) -> PaceForecast {
        let targetPace = goal.targetTime.map { $0 / goal.distance * 1000 }
        func total(_ distance: Double) -> Double? {
            FinishPrediction.totalTime(toCover: distance, distance: snapshot.distance, elapsed: snapshot.elapsed,
                                       moving: snapshot.movingTime, currentPace: snapshot.currentPace,
                                       targetPace: targetPace)
        }
        let finish = total(goal.distance)
        let next = snapshot.nextBadge == nil ? nil : total(snapshot.distance + snapshot.distanceToNextBadge)
        return PaceForecast(eta: finish.map { time + $0 - snapshot.elapsed }, finish: finish,
                            nextETA: next.map { time + $0 - snapshot.elapsed })
    }

    /// After a pace of a run with a target time: `alert: kind=off_pace` / `back_on_pace` to its coaches.
    func watchPace(of entry: RunnerEntry, _ snapshot: RunSnapshot, at time: Double) {
        guard let run = entry.run, var monitor = run.offPace else { return }
        let change = monitor.observe(currentPace: snapshot.currentPace, at: time)
        run.offPace = monitor
        guard let change, let pace = snapshot.currentPace else { return }
        let alert = AlertEvent(runner: entry.name, alert: change == .offPace ? "off_pace" : "back_on_pace",
                               distance: snapshot.distance, elapsed: snapshot.elapsed, pace: pace,
                               target: monitor.targetPace, off: monitor.deviation(of: pace) * 100,
                               battery: run.battery?.level)
        broadcast(Self.line(alert), about: entry.name, entry: entry, to: .coaches)
    }

    // MARK: Checkpoints

    /// A coach's `every=` interval for a runner (or everyone), set when it coaches; `nil` clears it.
    func setCheckpoints(_ every: Double?, for id: ConnectionID, target: WatchTarget) {
        switch target {
        case .everyone:
            sessions[id]?.everyoneCheckpointEvery = every
            if every == nil { everyoneCheckpointCoaches.remove(id) } else { everyoneCheckpointCoaches.insert(id) }
        case .runner(let name):
            sessions[id]?.checkpointEvery[name] = every
            if every != nil {
                checkpointCoaches[name, default: []].insert(id)
            } else {
                checkpointCoaches[name]?.remove(id)
                if checkpointCoaches[name]?.isEmpty == true { checkpointCoaches[name] = nil }
            }
        }
    }

    /// A connection stops coaching: its checkpoint intervals go.
    func forgetCheckpoints(of id: ConnectionID, _ session: Session) {
        for name in session.checkpointEvery.keys {
            checkpointCoaches[name]?.remove(id)
            if checkpointCoaches[name]?.isEmpty == true { checkpointCoaches[name] = nil }
        }
        everyoneCheckpointCoaches.remove(id)
    }

    /// A run's distance went from `from` to `to` (metres, elapsed seconds): `alert: kind=checkpoint` to each of
    /// its coaches with an interval, for every multiple of it passed, at the interpolated time.
    func passCheckpoints(of runner: String, runID: Int64, from: (distance: Double, elapsed: Double),
                         to: (distance: Double, elapsed: Double)) {
        guard !everyoneCheckpointCoaches.isEmpty || checkpointCoaches[runner] != nil, to.distance > from.distance
        else { return }
        var ids = checkpointCoaches[runner] ?? []
        ids.formUnion(everyoneCheckpointCoaches)
        let battery = batteryLevel(of: runner)
        for id in ids.sorted() where mayFollow(runner, id) {
            guard var session = sessions[id],
                  let every = session.checkpointEvery[runner] ?? session.everyoneCheckpointEvery else { continue }
            var mark = session.checkpointMarks[runner].flatMap { $0.runID == runID ? $0 : nil }
                ?? CheckpointMark(runID: runID, passed: Int(from.distance / every), elapsed: from.distance < every ? 0 : nil)
            let passed = Int(to.distance / every)
            guard passed > mark.passed else { continue }
            for index in (mark.passed + 1)...passed {
                let distance = Double(index) * every
                let elapsed = from.elapsed + (distance - from.distance) / (to.distance - from.distance)
                    * (to.elapsed - from.elapsed)
                // The stretch's pace needs its start: unknown for the first checkpoint after a mid-run join.
                let pace = mark.elapsed.map { (elapsed - $0) / every * 1000 }
                send(AlertEvent(runner: runner, alert: "checkpoint", distance: distance, elapsed: elapsed, pace: pace,
                                battery: battery), to: id)
                mark.passed = index
                mark.elapsed = elapsed
            }
            session.checkpointMarks[runner] = mark
            sessions[id] = session
        }
    }

    // MARK: Leaderboard

    /// A live run's new figures on the board (its place is worked out at the next tick).
    func rank(_ runner: String, distance: Double, elapsed: Double, moving: Double, goal: Double?) {
        guard !isPrivate(runner) else { return }  // not on the board: as if it did not run
        leaderboard.update(runner, distance: distance, elapsed: elapsed, moving: moving, goal: goal)
        isBoardChanged = true
    }

    /// A run left the board.
    func unrank(_ runner: String) {
        leaderboard.remove(runner)
        isBoardChanged = true
    }

    /// Once a second: the board's new order, and `rank:` to this loop's `watch:*` spectators for every runner
    /// whose place is not the one it had a second ago, best place first. Why not at every pass: in a pack that
    /// passes and repasses every few fixes, a `rank:` per swap (the marathon benchmark: 2.7 million lines in 25 s
    /// to 5 spectators) drowns the spectators of everyone; once a second says the same.
    func announceRanks() {
        guard isBoardChanged else { return }
        isBoardChanged = false
        let moves = leaderboard.rerank()
        guard !moves.isEmpty, !everyoneWatchers.isEmpty else { return }
        for move in moves {
            guard let standing = leaderboard.standing(of: move.runner) else { continue }
            let line = Self.line(RankEvent(runner: move.runner, previous: move.from, standing: standing))
            for id in everyoneWatchers { send(line, to: id) }
        }
    }

    /// A goal distance to the centimetre, as `ok:goal` shows it: `leaders:100` finds the runner who typed
    /// `goal:100.004`, and a goal is the same whatever the digits past it.
    static func goalDistance(_ metres: Double) -> Double {
        Double(NumberFormat.string(metres, decimals: NumberFormat.distanceDecimals)) ?? metres
    }

    /// `leaders:` / `leaders:GOAL_M`: the board's first places, then `done:leaders`.
    func answerLeaders(_ id: ConnectionID, goal: Double?) {
        let (standings, more) = leaderboard.standings(goal: goal.map(Self.goalDistance), limit: configuration.leaderboardPlaces)
        for (runner, standing) in standings { send(LeaderEvent(runner: runner, standing: standing), to: id) }
        send(DoneEvent(what: "leaders", count: standings.count, more: more), to: id)
    }

    /// `leaders:course=NAME`: the public runners on course NAME ranked by how far along it they are (`dist` is
    /// `along`), the gap in metres and in seconds at the leader's average pace along the course.
    func answerCourseLeaders(_ id: ConnectionID, course: String) {
        let ranked = runners(onCourse: course)
        let shown = ranked.prefix(configuration.leaderboardPlaces)
        let leader = ranked.first
        for (index, runner) in shown.enumerated() {
            let gap = (leader?.along ?? runner.along) - runner.along
            send(LeaderEvent(runner: runner.runner, standing: Standing(
                position: index + 1, distance: runner.along, elapsed: runner.elapsed, gap: gap,
                gapTime: leader?.secondsPerMetre.map { gap * $0 })), to: id)
        }
        send(DoneEvent(what: "leaders", count: shown.count, more: ranked.count > shown.count), to: id)
    }
}
