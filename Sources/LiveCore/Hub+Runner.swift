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
        guard let key, RunnerKey.verify(key, against: entry.keyHash) else {
            if key == nil { fail(id, .wrongKey, "\(name) is claimed: give its key") }
            else { guessedWrong(id, target: name, "wrong key for \(name)", now: now) }
            return
        }
        if let previous = entry.connection, previous != id {
            // The phone reconnected before the server saw the old connection die: the new one speaks now.
            sessions[previous]?.runner = nil
            fail(previous, .replaced, "\(name) continues on a newer connection")
            effects.close(previous, reason: "replaced by a new connection for \(name)")
        }
        entry.connection = id
        sessions[id]?.runner = entry
        var fields = [Event.Field(key: "name", value: name)]
        if let run = entry.run, let runID = run.id {
            run.disconnectedAt = nil
            fields.append(Event.Field(key: "resumed", value: String(runID)))
            send(OkEvent(what: "iam", fields: fields), to: id)
            // Restore the runner's screen, then tell it what is safe on disk so it resends only the rest.
            if let started = run.startedLine { send(started, to: id, as: .event(about: name)) }
            if let pace = run.latestPaceLine { send(pace, to: id, as: .pace(of: name)) }
            if let acknowledged = run.committedAcknowledgement {
                send(AckEvent(runner: name, timestamp: acknowledged), to: id)
            }
            effects.log("runner \(name) resumed run \(runID) on \(id)")
        } else {
            send(OkEvent(what: "iam", fields: fields), to: id)
            effects.log("\(id) is \(name)")
        }
    }

    private func claim(_ id: ConnectionID, name: String, now: Double) {
        let key = RunnerKey.generate()
        store.submit(.runner(name: name, keyHash: RunnerKey.hash(key), created: now))
        claimed(id, name: name, key: key)
    }

    /// A name now this connection's runner, with its key (stored, or queued for the store).
    package func claimed(_ id: ConnectionID, name: String, key: String) {
        unknownNames.remove(name)
        let entry = RunnerEntry(name: name, keyHash: RunnerKey.hash(key), history: BadgeHistory())
        entry.connection = id
        runners[name] = entry
        sessions[id]?.runner = entry
        effects.relay(.runner(name: name, keyHash: entry.keyHash, history: entry.history, privacy: entry.privacy))
        sendOnceStored(OkEvent(what: "iam", fields: [.init(key: "name", value: name), .init(key: "key", value: key),
                                                      .init(key: "new", value: "yes")]), to: id)
        effects.log("\(id) claimed the name \(name)")
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
    package enum FixPlacement: Equatable {
        /// Already had (a resend over TCP): skipped; `stored` tells whether the store has committed it.
        case resent(stored: Bool)
        /// Filtered out by the engine before the run started: nothing is stored.
        case rejected(FixRejection)
        /// Handed to the store (now, or already: a resend of a phone app's position) as fix `sequence` of run
        /// `runID`, accepted or filtered: durable once the store commits that sequence.
        case recorded(runID: Int64, sequence: Int64)
        /// No run could be started (the store failed): nothing happened, send it again later.
        case failed
    }

    /// One fix of a runner through the engine and into the store, from its TCP connection (`replyTo`: acks,
    /// notes and errors go there) or from a phone app over HTTP (`replyTo` nil, `fromDevice` true: a run it
    /// starts keeps its fixes in a ``RunLog``, so positions sent late and in any order are measured in time
    /// order).
    func place(_ location: LocationCommand, for entry: RunnerEntry, replyTo id: ConnectionID?, now: Double,
               fromDevice: Bool = false) -> FixPlacement {
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
            if fromDevice { run.log = RunLog() }
            entry.run = run
        }
        let fix = Fix(latitude: location.latitude, longitude: location.longitude,
                      accuracy: location.accuracy, timestamp: location.timestamp, altitude: location.altitude)
        if let log = run.log {
            // A position the run has (the app did not get the answer): answered once it is on disk.
            if let stored = log.entry(at: location.timestamp), let runID = run.storedID {
                statistics.fixesResent += 1
                if let acknowledged = run.committedAcknowledgement, let id {
                    send(AckEvent(runner: name, timestamp: acknowledged), to: id)
                }
                return .recorded(runID: runID, sequence: stored.sequence)
            }
            if location.timestamp < log.newestTimestamp ?? -.infinity, !log.isFull {
                // Older than a position the run has: it is measured again in time order once they stop coming.
                run.lateArrival = now
                if let newest = run.tracker.lastAcceptedTimestamp, location.timestamp < newest {
                    return placeLate(fix, text: location.timestampText, in: run, now: now)
                }
            }
        } else if (fromDevice ? location.timestamp == run.tracker.lastAcceptedTimestamp
                                : location.timestamp <= run.tracker.lastAcceptedTimestamp ?? -.infinity)
            || run.filteredAboveLastAccepted.contains(location.timestamp)
            || location.timestamp == run.heldStart?.fix.timestamp {
            // A fix the run already has (a resend after a reconnect) is skipped without error, and acked if on
            // disk: anything not newer than the last accepted fix, or a filtered or held fix already recorded.
            statistics.fixesResent += 1
            if let acknowledged = run.committedAcknowledgement, let id {
                send(AckEvent(runner: name, timestamp: acknowledged), to: id)
            }
            // A phone app's resend to a run started over TCP (no log): answered once all the run has is stored.
            // Its positions older than the newest are not resends: the filter judges them (`out_of_order`).
            if fromDevice, let runID = run.storedID { return .recorded(runID: runID, sequence: run.nextSequence - 1) }
            let stored = run.committedAcknowledgement.flatMap(Double.init).map { location.timestamp <= $0 } ?? false
            return .resent(stored: stored)
        }
        let heldBefore = run.heldStart
        let outcome = fromDevice && location.timestamp - now > configuration.deviceFutureAllowance
            ? .rejected(.future) : run.tracker.add(fix, now: now)
        if let held = heldBefore, run.tracker.droppedStart == held.fix { dropHeldStart(held, of: run) }
        switch outcome {
        case .held:
            guard let runID = reserve(run, runner: name, started: fix.timestamp, id: id) else {
                if run.storedID == nil { entry.run = nil }
                return .failed
            }
            run.heldStart = (fix, run.nextSequence, now, location.timestampText)
            if let id { noteUnstartedRun(.stale, fix: fix, in: run, runner: name, to: id, now: now) }
            return record(fix, rejection: nil, text: location.timestampText, in: run, now: now)
                .map { .recorded(runID: runID, sequence: $0) } ?? .failed
        case .rejected(let reason):
            statistics.fixesFiltered[reason, default: 0] += 1
            if run.id == nil, let id { noteUnstartedRun(reason, fix: fix, in: run, runner: name, to: id, now: now) }
            guard let runID = run.storedID else {
                // No run yet, so nothing to store: the fix is answered at once so the client can forget it
                // (unless its stamp is implausibly far ahead: that ack would cover fixes not yet received).
                if let id, isAcknowledgeable(location.timestamp, now: now) {
                    send(AckEvent(runner: name, timestamp: location.timestampText), to: id)
                }
                return .rejected(reason)
            }
            run.filteredAboveLastAccepted.insert(location.timestamp)
            return record(fix, rejection: reason, text: location.timestampText, in: run, now: now)
                .map { .recorded(runID: runID, sequence: $0) } ?? .failed
        case .accepted(let progress):
            statistics.fixesAccepted += 1
            if !run.filteredAboveLastAccepted.isEmpty {
                run.filteredAboveLastAccepted = run.filteredAboveLastAccepted.filter { $0 > fix.timestamp }
            }
            if progress.started {
                // A held fix this one confirmed starts the run (or this one, earlier): the start's time and text.
                let confirmed = heldBefore.flatMap { run.tracker.startedAt == $0.fix.timestamp ? $0 : nil }
                run.heldStart = nil
                guard start(run, runner: name, at: run.tracker.startedAt ?? fix.timestamp,
                            text: confirmed?.text ?? location.timestampText, id: id) else {
                    entry.run = nil  // nothing was stored or announced: the unacked fix is resent later
                    return .failed
                }
            }
            guard let sequence = record(fix, rejection: nil, text: location.timestampText, in: run, now: now),
                  let runID = run.id else { return .failed }
            let catchingUp = now - fix.timestamp > configuration.catchUpAge
            if catchingUp { run.catchUpAt = now }
            // The course matches the fix as the runner sent it: its own filter follows the course's shape.
            let courseUpdate = run.course?.update(with: fix)
            announce(progress, runner: name, timestampText: location.timestampText, in: entry, at: fix.timestamp,
                     catchingUp: catchingUp, course: courseUpdate)
            return .recorded(runID: runID, sequence: sequence)
        }
    }

    /// A phone app's position older than the run's newest (its queue, sent after a gap or newest first): stored
    /// now, measured when the burst is over (``remeasure(_:now:)``); the live figures lag it until then.
    private func placeLate(_ fix: Fix, text: String, in run: LiveRun, now: Double) -> FixPlacement {
        guard let runID = run.storedID else { return .failed }
        statistics.fixesLate += 1
        return record(fix, rejection: nil, text: text, in: run, now: now)
            .map { .recorded(runID: runID, sequence: $0) } ?? .failed
    }

    /// The next fix showed the held one was a cached position: it is stored again as filtered `stale`.
    private func dropHeldStart(_ held: (fix: Fix, sequence: Int64, received: Double, text: String), of run: LiveRun) {
        run.heldStart = nil
        statistics.fixesFiltered[.stale, default: 0] += 1
        if let index = run.log?.index(at: held.fix.timestamp) { run.log?.setRejection(.stale, at: index) }
        guard let runID = run.storedID else { return }
        store.submit(.fix(StoredFix(runID: runID, sequence: held.sequence, fix: held.fix, received: held.received,
                                    rejection: .stale), acknowledgement: nil))
    }

    /// A run id for a run holding a stale first fix, nobody told of it yet (the store gets its row, so the fix
    /// can be stored); for a run already holding one, its row's start moves to the newly held fix. Nil (and
    /// `err:storage`) when the store cannot give an id.
    private func reserve(_ run: LiveRun, runner name: String, started: Double, id: ConnectionID?) -> Int64? {
        if case .running(let current, _) = run.phase { return current }
        guard let runID = run.storedID ?? newRunID(for: name, replyTo: id) else { return nil }
        run.phase = .holding(id: runID)
        runOwners[runID] = name
        store.submit(.runHeld(id: runID, runner: name, started: started))
        return runID
    }

    /// A new run id from the store; nil (and `err:storage` to `id`) when the store cannot give one.
    private func newRunID(for name: String, replyTo id: ConnectionID?) -> Int64? {
        do {
            return try store.allocateRunID()
        } catch {
            if let id { fail(id, .storage, "storage: cannot start a run: \(error.message)") }
            effects.log("run id allocation failed for \(name): \(error)")
            return nil
        }
    }

    /// Starts a run under an id from the store (the one it holds under, if any) at `started`, the time of its
    /// first accepted fix (`text` as the runner sent it); false (and `err:storage`) when the store cannot give one.
    func start(_ run: LiveRun, runner name: String, at started: Double, text: String, id: ConnectionID?) -> Bool {
        guard let runID = run.storedID ?? newRunID(for: name, replyTo: id) else { return false }
        run.phase = .running(id: runID, started: started)
        runOwners[runID] = name
        // Anyone reads the counters (`stats:`, `/metrics`): a private run is counted nowhere there.
        if !isPrivate(name) { statistics.runsStarted += 1 }
        store.submit(.runStarted(id: runID, runner: name, started: started))
        // The other loops (and nodes) may never have read this runner: its privacy goes before its events.
        if let entry = runners[name] {
            effects.relay(.runner(name: name, keyHash: entry.keyHash, history: entry.history, privacy: entry.privacy))
        }
        let startedEvent = RunStartedEvent(runner: name, runID: runID, timestamp: text), line = Self.line(startedEvent)
        run.startedLine = line
        broadcast(line, about: name, to: .everyone,
                  relaying: .started(runID: runID, started: started, startHistory: run.startHistory),
                  event: .runStarted(startedEvent))
        rank(name, distance: 0, elapsed: 0, moving: 0, goal: runners[name]?.goal?.distance)
        if let entry = runners[name], let course = entry.followedCourse(in: configuration.raceCourse) {
            run.course = courseMatcher(for: course, goal: entry.goal, start: started)
        }
        effects.log("run \(runID) started by \(name)")
        return true
    }

    /// Hands one fix to the store (and the run's log); the ack goes out when its batch commits. The fix's
    /// sequence, nil when the run has no id.
    @discardableResult
    private func record(_ fix: Fix, rejection: FixRejection?, text: String, in run: LiveRun, now: Double) -> Int64? {
        guard let runID = run.storedID else { return nil }
        var acknowledgement: String?
        if isAcknowledgeable(fix.timestamp, now: now), run.newestSubmitted.map({ fix.timestamp > $0.timestamp }) ?? true {
            run.newestSubmitted = (fix.timestamp, text)
            acknowledgement = text
        }
        let stored = StoredFix(runID: runID, sequence: run.nextSequence, fix: fix, received: now, rejection: rejection)
        run.nextSequence += 1
        // A fix filtered `future` is never measured: kept out of the log, or every fix after it would be late.
        if rejection != .future {
            run.log?.insert(RunLog.Entry(fix: fix, received: now, sequence: stored.sequence, rejection: rejection))
        }
        store.submit(.fix(stored, acknowledgement: acknowledgement))
        return stored.sequence
    }

    /// True when a fix's stamp may serve as an ack mark: not beyond the filter's future allowance.
    func isAcknowledgeable(_ timestamp: Double, now: Double) -> Bool {
        timestamp <= now + configuration.tracker.filter.futureAllowance
    }

    /// The events one accepted fix causes: pace, then badges and splits.
    /// `time` is the fix's unix time (what a goal's predicted finish counts from). A fix `catchingUp` on a
    /// backlog (received long after it was taken) moves the marker and the distance, but its pace is not the
    /// runner's now: its `pace:` has no `cur=`, it feeds no off-pace alert, and the board waits for the burst
    /// to end.
    func announce(_ progress: RunProgress, runner name: String, timestampText: String, in entry: RunnerEntry,
                  at time: Double, catchingUp: Bool = false, course update: CourseUpdate? = nil) {
        let snapshot = progress.snapshot
        var event = PaceEvent(snapshot, runner: name, timestamp: timestampText)
        if catchingUp { event.current = nil }
        if let goal = entry.goal { event.forecast = Self.forecast(goal, snapshot, at: time) }
        if let run = entry.run, case .running(_, let started) = run.phase {
            if let update {
                let (fields, eta, finish) = Self.paceCourse(update, started: started)
                run.courseFields = fields
                run.lastCourseUpdate = update
                // The finish is the course's, predicted along it; the next badge's as a goal of its length says.
                let nextETA = (event.forecast ?? entry.course.map {
                    Self.forecast(GoalCommand(distance: $0.length), snapshot, at: time)
                })?.nextETA
                event.forecast = PaceForecast(eta: eta, finish: finish, nextETA: nextETA)
            }
            event.course = run.course == nil ? nil : run.courseFields
        }
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
                              rejections: entry.run?.tracker.rejections ?? [:], goal: entry.goal?.distance,
                              course: entry.run?.course?.course.name),
                  event: .pace(event))
        guard let run = entry.run, let runID = run.id else { return }
        if !catchingUp {
            rank(name, distance: snapshot.distance, elapsed: snapshot.elapsed, moving: snapshot.movingTime,
                 goal: entry.goal?.distance)
        }
        passCheckpoints(of: name, runID: runID, from: run.lastAnnounced, to: (snapshot.distance, snapshot.elapsed))
        run.lastAnnounced = (snapshot.distance, snapshot.elapsed)
        if !catchingUp { watchPace(of: entry, snapshot, at: time) }
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
            broadcast(line, about: name, to: .everyone, ownLine: own, relaying: .badge, event: .badge(badge))
        }
        if let update, case .running(_, let started) = run.phase {
            announceCourseEvents(update, of: entry, snapshot, started: started)
        }
        run.announcedSplits += progress.splits.count
        for split in progress.splits {
            let event = SplitEvent(split, runner: name)
            broadcast(Self.line(event), about: name, to: .spectators, event: .split(event))
        }
    }

    /// `stop:` / `stop:discard`.
    func stop(_ id: ConnectionID, save: Bool, now: Double) {
        guard let entry = ownEntry(id, for: "stop", asking: "iam:NAME") else { return }
        guard entry.run?.id != nil else {
            let refused = entry.run?.notedReasons.map(\.rawValue).sorted() ?? []
            finish(entry, status: .discarded, reason: .discard, now: now)  // drops a held stale fix, if any
            fail(id, .noRun, refused.isEmpty ? "no run in progress: send loc: fixes first"
                 : "no run in progress: no fix was accepted yet (refused: \(refused.joined(separator: ", ")))")
            return
        }
        finish(entry, status: save ? .saved : .discarded, reason: save ? .stop : .discard, now: now, replyingTo: id)
    }

    /// Ends a run: final measurements to the store, `end:` to everyone who follows the runner. `replyingTo`: the
    /// connection whose `stop:` this answers, which gets its `end:` once the end is committed (the others at once).
    func finish(_ entry: RunnerEntry, status: RunStatus, reason: RunEndReason, now: Double,
                replyingTo stopper: ConnectionID? = nil) {
        if let run = entry.run, case .holding(let runID) = run.phase {
            // Only a held stale fix, never confirmed: no run to speak of; its row is kept as discarded.
            let held = run.heldStart?.fix.timestamp ?? now
            store.submit(.runFinished(RunRecord(id: runID, runner: entry.name, started: held, ended: held,
                                                status: .discarded, rejections: run.tracker.rejections),
                                      splits: [], checkpoints: []))
            finishedRuns.append((runID, now))
            effects.log("run \(runID) of \(entry.name) dropped: it held only a stale first fix")
        }
        if entry.run?.lateArrival != nil { remeasure(entry, now: now) }
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
                               status: status, rejections: summary.rejections, elevationGain: summary.elevationGain,
                               elevationLoss: summary.elevationLoss)
        store.submit(.runFinished(record, splits: summary.splits, checkpoints: summary.checkpoints))
        if status != .discarded {
            entry.history = run.tracker.history
            store.submit(.history(runner: entry.name, entry.history))
            effects.relay(.runner(name: entry.name, keyHash: entry.keyHash, history: entry.history,
                                 privacy: entry.privacy))
        }
        entry.run = nil
        unrank(entry.name)
        finishedRuns.append((runID, now))
        let event = RunEndedEvent(summary, runner: entry.name, runID: runID, saved: status != .discarded, reason: reason)
        let line = Self.line(event)
        recentlyEnded.append(line)
        if recentlyEnded.count > 20 { recentlyEnded.removeFirst() }
        broadcast(line, about: entry.name, to: .everyone, except: stopper, relaying: .ended(runID: runID),
                  event: .ended(event))
        if let stopper { effects.sendOnceStored([line], to: stopper, as: .event(about: entry.name)) }
        effects.log("run \(runID) of \(entry.name) ended (\(reason.rawValue)): \(Int(summary.distance)) m, \(status.rawValue)")
    }

    /// A batch reached the disk: acks to the runners, or `err:storage` when it failed.
    package func committed(_ receipt: CommitReceipt) {
        assertOnLoop()
        for (runID, sequence) in receipt.committedSequences {
            guard let name = runOwners[runID], let run = runners[name]?.run, run.storedID == runID else { continue }
            run.committedSequence = max(run.committedSequence, sequence)
        }
        for (runID, text) in receipt.acknowledgements {
            guard let name = runOwners[runID], let entry = runners[name] else { continue }
            if entry.run?.storedID == runID { entry.run?.committedAcknowledgement = text }
            if let connection = entry.connection {
                send(AckEvent(runner: name, timestamp: text), to: connection)
            }
        }
        answerPhones(after: receipt)
        guard let failure = receipt.failure else { return }
        effects.log("store: batch failed: \(failure)")
        for runID in receipt.affectedRuns {
            guard let name = runOwners[runID], let connection = runners[name]?.connection else { continue }
            fail(connection, .storage, "storage failed; fixes kept until acked: \(failure.message)")
        }
    }
}
