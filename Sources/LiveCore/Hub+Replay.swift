import RunCore
import RunStore
import Wire

// `replay:RUN_ID SPEED`: a saved run's events streamed again to the asking connection, as if live.

extension Hub {
    /// `replay:ID SPEED` (a new replay replaces the connection's current one) or `replay:off`.
    func replay(_ runID: Int64?, speed: Double, for id: ConnectionID, now: Double) {
        guard let runID else {
            let stopped = replays.removeValue(forKey: id) != nil
            send(OkEvent(what: "replay", fields: [.yesNo("stopped", stopped)]), to: id)
            effects.scheduleReplays(at: nextReplayDue)
            return
        }
        // A replay counts from its request: the run is read off the loop, and requests meanwhile must see it.
        guard replays[id] != nil || loadingReplays.contains(id)
                || replays.count + loadingReplays.count < configuration.maximumReplays else {
            fail(id, .busy, "at most \(configuration.maximumReplays) replays at once: try again later")
            return
        }
        loadingReplays.insert(id)
        // Read off the loop with the same checks as `run:ID`: a private runner's run is a missing one to others.
        let visible = privateRunnersVisible(to: id), viewer = sessions[id]?.name
        let pageSize = configuration.replayPageSize
        effects.loadReplay(for: id, { store throws(StoreError) -> Result<ReplaySource, WireError> in
            guard let (run, owner) = try Self.readableRun(runID, visible: visible, in: store) else {
                return .failure(WireError(.notFound, "no run \(runID)"))
            }
            guard run.record.status != .live else {
                return .failure(WireError(.badArgument, "run \(runID) is live: watch:\(run.record.runner)"))
            }
            let zone = viewer == run.record.runner ? 0 : owner.privacy.zone
            // The run is read once by sequence for its timeline, then a page at a time: never held whole.
            var timeline = try FixTimeline(run: runID, selecting: .accepted, in: store)
            let fixes = try timeline.next(pageSize, from: store)
            return .success(ReplaySource(run: run, fixes: fixes, timeline: timeline, zone: zone))
        }) { [self] result in
            loadingReplays.remove(id)
            guard sessions[id] != nil else { return }
            switch result {
            case .failure(let error):
                fail(id, error.code, error.reason)
            case .success(let source):
                send(OkEvent(what: "replay", fields: [.integer("run", runID), .number("speed", speed, 1)]), to: id)
                replays[id] = Replay(source, speed: speed, now: now, configuration: configuration.tracker,
                                     pageSize: pageSize)
                advanceReplays(now: now)
            }
        }
    }

    /// Sends every replay's lines due by `now`, forgets the finished ones, asks for the next page of those
    /// running low, and asks to be called again when the next line is due.
    package func advanceReplays(now: Double) {
        assertOnLoop()
        for (id, replay) in replays.sorted(by: { $0.key < $1.key }) {
            // The runner went private meanwhile: to this viewer the run no longer exists.
            guard mayFollow(replay.runner, id) else {
                replays[id] = nil
                fail(id, .notFound, "no run \(replay.runID)")
                continue
            }
            for (line, isPace) in replay.lines(dueBy: now) { send(line, to: id, as: isPace ? .pace(of: replay.runner) : .event(about: replay.runner)) }
            if replay.isOver {
                replays[id] = nil
            } else if replay.needsFixes {
                readFixes(of: replay, for: id)
            }
        }
        effects.scheduleReplays(at: nextReplayDue)
    }

    /// Reads a replay's next page off the loop, asked for while a page is still left to replay, so the replay
    /// seldom waits for it (and the loop never does). A page that comes back for a replay stopped, replaced or
    /// closed meanwhile is dropped with it.
    private func readFixes(of replay: Replay, for id: ConnectionID) {
        guard let timeline = replay.takeTimeline() else { return }
        let limit = replay.pageSize
        effects.readReplayFixes({ store throws(StoreError) -> ReplayPage in
            var timeline = timeline
            let fixes = try timeline.next(limit, from: store)
            return ReplayPage(fixes: fixes, timeline: timeline)
        }) { [self] result in
            guard replays[id] === replay else { return }
            switch result {
            case .success(let page):
                replay.received(page)
            case .failure(let error):
                replays[id] = nil
                fail(id, .storage, "storage: \(error.message)")
            }
            effects.scheduleReplays(at: nextReplayDue)
        }
    }

    /// When the next replayed line is due, on the server's clock; nil with no replay going.
    var nextReplayDue: Double? {
        replays.values.compactMap(\.nextDue).min()
    }
}
