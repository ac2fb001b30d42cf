import RunCore
import RunStore
import Wire

extension Hub {
    /// `iam:NAME [KEY]`: claims a new name (the reply carries its key) or proves an old one and resumes its run.
    func identify(_ id: ConnectionID, name: String, key: String?, now: Double) {
        if let current = sessions[id]?.name {
            fail(id, .alreadyIdentified, "this connection is already \(current)")
            return
        }
        guard let lookup = runnerEntry(named: name, for: id) else { return }
        guard let entry = lookup else {
            claim(id, name: name, now: now)
            return
        }
        if key != nil, refusesGuessing(id) { return }
        guard let key, RunnerKey.verify(key, against: entry.keyHash) else {
            if key != nil { output.guessedWrong(id) }
            fail(id, .wrongKey, key == nil ? "\(name) is claimed: give its key" : "wrong key for \(name)")
            return
        }
        if let previous = entry.connection, previous != id {
            // The phone reconnected before the server saw the old connection die: the new one speaks now.
            sessions[previous]?.runner = nil
            fail(previous, .replaced, "\(name) continues on a newer connection")
            output.close(previous, reason: "replaced by a new connection for \(name)")
        }
        entry.connection = id
        sessions[id]?.runner = entry
        var fields = [Event.Field(key: "name", value: name)]
        if let run = entry.run, let runID = run.id {
            run.disconnectedAt = nil
            fields.append(Event.Field(key: "resumed", value: String(runID)))
            send(OkEvent(what: "iam", fields: fields), to: id)
            // Restore the runner's screen, then tell it what is safe on disk so it resends only the rest.
            if let started = run.startedLine { send(started, to: id) }
            if let pace = run.latestPaceLine { send(pace, to: id, paceOf: name) }
            if let acknowledged = run.committedAcknowledgement {
                send(AckEvent(runner: name, timestamp: acknowledged), to: id)
            }
            output.log("runner \(name) resumed run \(runID) on \(id)")
        } else {
            send(OkEvent(what: "iam", fields: fields), to: id)
            output.log("\(id) is \(name)")
        }
    }

    private func claim(_ id: ConnectionID, name: String, now: Double) {
        let key = RunnerKey.generate()
        store.submit(.runner(name: name, keyHash: RunnerKey.hash(key), created: now))
        claimed(id, name: name, key: key)
    }

    /// A name now this connection's runner, with its key (stored, or queued for the store).
    func claimed(_ id: ConnectionID, name: String, key: String) {
        unknownNames.remove(name)
        let entry = RunnerEntry(name: name, keyHash: RunnerKey.hash(key), history: BadgeHistory())
        entry.connection = id
        runners[name] = entry
        sessions[id]?.runner = entry
        output.relay(.runner(name: name, keyHash: entry.keyHash, history: entry.history, privacy: entry.privacy))
        send(OkEvent(what: "iam", fields: [.init(key: "name", value: name), .init(key: "key", value: key),
                                            .init(key: "new", value: "yes")]), to: id)
        output.log("\(id) claimed the name \(name)")
    }

    /// `loc:`: one fix through the engine, stored, and the run's events to everyone who follows it.
    func locate(_ id: ConnectionID, _ runner: RunnerEntry?, _ location: LocationCommand, now: Double) {
        guard let entry = runner, entry.connection == id else {
            fail(id, .notIdentified, "send iam:NAME before loc:")
            return
        }
        _ = place(location, for: entry, replyTo: id, now: now)
    }

    /// What became of one fix (a phone app's HTTP answer depends on it).
    enum FixPlacement: Equatable {
        /// Already had: skipped; `stored` tells whether the store has committed it.
        case resent(stored: Bool)
        /// Filtered out by the engine (before the run started, nothing is stored).
        case rejected(FixRejection)
        /// Accepted into run `runID` and handed to the store: durable once an ack covers its timestamp.
        case recorded(runID: Int64)
        /// No run could be started (the store failed): nothing happened, send it again later.
        case failed
    }

    /// One fix of a runner through the engine and into the store, from its TCP connection (`replyTo`: acks,
    /// notes and errors go there) or from a phone app over HTTP (`replyTo` nil).
    func place(_ location: LocationCommand, for entry: RunnerEntry, replyTo id: ConnectionID?, now: Double) -> FixPlacement {
        let name = entry.name
        let run: LiveRun
        if let current = entry.run {
            run = current
        } else {
            // A live run keeps only the points its next fixes need: whole tracks are replayed from the store.
            run = LiveRun(tracker: RunTracker(configuration: configuration.tracker.keepingTrack(false),
                                              history: entry.history))
            run.offPace = offPaceMonitor(for: entry.goal)
            run.zoneDelay = entry.privacy.zone > 0 ? PrivacyZone.Delay(PrivacyZone(metres: entry.privacy.zone)) : nil
            entry.run = run
        }
        // A fix the run already has (a resend after a reconnect) is skipped without error, and acked if on disk:
        // anything not newer than the last accepted fix, or a filtered fix already recorded.
        if location.timestamp <= run.tracker.lastAcceptedTimestamp ?? -.infinity
            || run.filteredAboveLastAccepted.contains(location.timestamp) {
            statistics.fixesResent += 1
            if let acknowledged = run.committedAcknowledgement, let id {
                send(AckEvent(runner: name, timestamp: acknowledged), to: id)
            }
            let stored = run.committedAcknowledgement.flatMap(Double.init).map { location.timestamp <= $0 } ?? false
            return .resent(stored: stored)
        }
        let fix = Fix(latitude: location.latitude, longitude: location.longitude,
                      accuracy: location.accuracy, timestamp: location.timestamp)
        switch run.tracker.add(fix, now: now) {
        case .rejected(let reason):
            statistics.fixesFiltered[reason, default: 0] += 1
            if run.id == nil {
                // No run yet, so nothing to store: the fix is answered at once so the client can forget it
                // (unless its stamp is implausibly far ahead: that ack would cover fixes not yet received).
                if let id {
                    if isAcknowledgeable(location.timestamp, now: now) {
                        send(AckEvent(runner: name, timestamp: location.timestampText), to: id)
                    }
                    noteUnstartedRun(reason, fix: fix, in: run, runner: name, to: id, now: now)
                }
                return .rejected(reason)
            }
            run.filteredAboveLastAccepted.insert(location.timestamp)
            record(fix, rejection: reason, text: location.timestampText, in: run, now: now)
            return .rejected(reason)
        case .accepted(let progress):
            statistics.fixesAccepted += 1
            if !run.filteredAboveLastAccepted.isEmpty {
                run.filteredAboveLastAccepted = run.filteredAboveLastAccepted.filter { $0 > fix.timestamp }
            }
            if progress.started {
                guard start(run, runner: name, fix: fix, text: location.timestampText, id: id) else {
                    entry.run = nil  // nothing was stored or announced: the unacked fix is resent later
                    return .failed
                }
            }
            record(fix, rejection: nil, text: location.timestampText, in: run, now: now)
            announce(progress, runner: name, timestampText: location.timestampText, in: entry, at: fix.timestamp)
            return .recorded(runID: run.id ?? 0)
        }
    }

    /// Starts a run under an id from the store; false (and `err:storage`) when the store cannot give one.
    private func start(_ run: LiveRun, runner name: String, fix: Fix, text: String, id: ConnectionID?) -> Bool {
        let runID: Int64
        do {
            runID = try store.allocateRunID()
        } catch {
            if let id { fail(id, .storage, "storage: cannot start a run: \(error.message)") }
            output.log("run id allocation failed for \(name): \(error)")
            return false
        }
        run.phase = .running(id: runID, started: fix.timestamp)
        runOwners[runID] = name
        statistics.runsStarted += 1
        store.submit(.runStarted(id: runID, runner: name, started: fix.timestamp))
        // The other loops (and nodes) may never have read this runner: its privacy goes before its events.
        if let entry = runners[name] {
            output.relay(.runner(name: name, keyHash: entry.keyHash, history: entry.history, privacy: entry.privacy))
        }
        let line = Self.line(RunStartedEvent(runner: name, runID: runID, timestamp: text))
        run.startedLine = line
        broadcast(line, about: name, to: .everyone,
                  relaying: .started(runID: runID, started: fix.timestamp, startHistory: run.startHistory))
        rank(name, distance: 0, elapsed: 0, moving: 0, goal: runners[name]?.goal?.distance)
        output.log("run \(runID) started by \(name)")
        return true
    }

    /// Hands one fix to the store; the ack goes out when its batch commits.
    private func record(_ fix: Fix, rejection: FixRejection?, text: String, in run: LiveRun, now: Double) {
        guard let runID = run.id else { return }
        var acknowledgement: String?
        if isAcknowledgeable(fix.timestamp, now: now), run.newestSubmitted.map({ fix.timestamp > $0.timestamp }) ?? true {
            run.newestSubmitted = (fix.timestamp, text)
            acknowledgement = text
        }
        let stored = StoredFix(runID: runID, sequence: run.nextSequence, fix: fix, received: now, rejection: rejection)
        run.nextSequence += 1
        store.submit(.fix(stored, acknowledgement: acknowledgement))
    }

    /// True when a fix's stamp may serve as an ack mark: not beyond the filter's future allowance.
    func isAcknowledgeable(_ timestamp: Double, now: Double) -> Bool {
        timestamp <= now + configuration.tracker.filter.futureAllowance
    }

    /// The events one accepted fix causes: pace, then badges and splits.
    /// `time` is the fix's unix time (what a goal's predicted finish counts from).
    func announce(_ progress: RunProgress, runner name: String, timestampText: String, in entry: RunnerEntry,
                  at time: Double) {
        let snapshot = progress.snapshot
        var event = PaceEvent(snapshot, runner: name, timestamp: timestampText)
        if let goal = entry.goal { event.forecast = Self.forecast(goal, snapshot, at: time) }
        // With a privacy zone, everyone but the runner gets the position the zone lets them see (or none).
        var own: [UInt8]?
        if var delay = entry.run?.zoneDelay {
            own = Self.line(event)
            let shown = delay.shown(snapshot.coordinate, at: snapshot.distance)
            entry.run?.zoneDelay = delay
            event.latitude = shown?.latitude
            event.longitude = shown?.longitude
        }
        let pace = Self.line(event)
        entry.run?.latestPaceLine = pace
        broadcast(pace, about: name, entry: entry, to: .spectators, droppable: true, ownLine: own,
                  relaying: sharedSequence == nil ? .other
                      : .pace(distance: snapshot.distance, elapsed: snapshot.elapsed, movingTime: snapshot.movingTime,
                              rejections: entry.run?.tracker.rejections ?? [:], goal: entry.goal?.distance))
        guard let run = entry.run, let runID = run.id else { return }
        rank(name, distance: snapshot.distance, elapsed: snapshot.elapsed, moving: snapshot.movingTime,
             goal: entry.goal?.distance)
        passCheckpoints(of: name, runID: runID, from: run.lastAnnounced, to: (snapshot.distance, snapshot.elapsed))
        run.lastAnnounced = (snapshot.distance, snapshot.elapsed)
        watchPace(of: entry, snapshot, at: time)
        for award in progress.awards {
            store.submit(.award(StoredAward(runner: name, runID: runID, award: award)))
            var badge = BadgeEvent(award, runner: name)
            var own: [UInt8]?
            if entry.run?.zoneDelay != nil {
                // Where a badge was won is where the runner is now: inside the trailing zone, hidden.
                own = Self.line(badge)
                badge.latitude = nil
                badge.longitude = nil
            }
            let line = Self.line(badge)
            entry.run?.badgeLines.append(line)
            broadcast(line, about: name, to: .everyone, ownLine: own, relaying: .badge)
        }
        for split in progress.splits {
            broadcast(Self.line(SplitEvent(split, runner: name)), about: name, to: .spectators)
        }
    }

    /// `stop:` / `stop:discard`.
    func stop(_ id: ConnectionID, save: Bool, now: Double) {
        guard let entry = ownEntry(id, for: "stop", asking: "iam:NAME") else { return }
        guard entry.run?.id != nil else {
            let refused = entry.run?.notedReasons.map(\.rawValue).sorted() ?? []
            entry.run = nil
            fail(id, .noRun, refused.isEmpty ? "no run in progress: send loc: fixes first"
                 : "no run in progress: no fix was accepted yet (refused: \(refused.joined(separator: ", ")))")
            return
        }
        finish(entry, status: save ? .saved : .discarded, reason: save ? .stop : .discard, now: now)
    }

    /// Ends a run: final measurements to the store, `end:` to everyone who follows the runner.
    func finish(_ entry: RunnerEntry, status: RunStatus, reason: RunEndReason, now: Double) {
        guard let run = entry.run, case .running(let runID, let started) = run.phase else {
            entry.run = nil
            return
        }
        let summary = run.tracker.finish()
        // `ended` is the run's own time (its last accepted fix), as for imports: the server's clock at a
        // timeout would put it up to the resume window late, and a replayed run at 20x far too late.
        let ended = run.tracker.lastAcceptedTimestamp ?? started
        let record = RunRecord(id: runID, runner: entry.name, started: started, ended: ended,
                               distance: summary.distance, elapsed: summary.elapsed, movingTime: summary.movingTime,
                               status: status, rejections: summary.rejections)
        store.submit(.runFinished(record, splits: summary.splits, checkpoints: summary.checkpoints))
        if status != .discarded {
            entry.history = run.tracker.history
            store.submit(.history(runner: entry.name, entry.history))
            output.relay(.runner(name: entry.name, keyHash: entry.keyHash, history: entry.history,
                                 privacy: entry.privacy))
        }
        entry.run = nil
        unrank(entry.name)
        finishedRuns.append((runID, now))
        let event = RunEndedEvent(summary, runner: entry.name, runID: runID, saved: status != .discarded, reason: reason)
        let line = Self.line(event)
        recentlyEnded.append(line)
        if recentlyEnded.count > 20 { recentlyEnded.removeFirst() }
        broadcast(line, about: entry.name, to: .everyone,
                  relaying: .ended(runID: runID))
        output.log("run \(runID) of \(entry.name) ended (\(reason.rawValue)): \(Int(summary.distance)) m, \(status.rawValue)")
    }

    /// A batch reached the disk: acks to the runners, or `err:storage` when it failed.
    func committed(_ receipt: CommitReceipt) {
        assertOnLoop()
        for (runID, text) in receipt.acknowledgements {
            guard let name = runOwners[runID], let entry = runners[name] else { continue }
            if entry.run?.id == runID { entry.run?.committedAcknowledgement = text }
            if let connection = entry.connection {
                send(AckEvent(runner: name, timestamp: text), to: connection)
            }
        }
        guard let failure = receipt.failure else { return }
        output.log("store: batch failed: \(failure)")
        for runID in receipt.affectedRuns {
            guard let name = runOwners[runID], let connection = runners[name]?.connection else { continue }
            fail(connection, .storage, "storage failed; fixes kept until acked: \(failure.message)")
        }
    }
}
