import RunCore
import RunStore
import Wire

/// The server's logic without sockets: sessions, runners, runs and who hears what.
///
/// Every entry point takes the clock as `now` and records what should happen outside it as ``HubEffect``s
/// (``effects``), which its driver carries out after each input: so it is tested without a network, and holds
/// no reference to the server. Loop thread only: nothing here is touched from another thread.
package final class Hub {
    package let configuration: ServerConfiguration
    let store: any RunStore
    /// What the hub decided should happen outside it, not yet carried out (its driver takes them after each
    /// input).
    package var effects = HubEffects()
    /// Counters for `stats:`.
    package var statistics = ServerStatistics()

    package var sessions: [ConnectionID: Session] = [:]
    /// Runners seen since start (loaded from the store on first use).
    package var runners: [String: RunnerEntry] = [:]
    /// Who ran each live or recently finished run (for acks and live `run:ID` answers).
    var runOwners: [Int64: String] = [:]
    /// Runs ended, oldest first: their owners are forgotten a minute later, when the last acks are long out.
    var finishedRuns: [(id: Int64, at: Double)] = []
    /// Connections following one runner with `watch:` / `coach:` (changed through ``addFollower(_:of:coach:)``
    /// and ``removeFollower(_:of:coach:)``, which count the changes of the names followed).
    var watchers: [String: Set<ConnectionID>] = [:]
    var coaches: [String: Set<ConnectionID>] = [:]
    /// Bumped whenever a runner gains its first follower here or loses its last: a cluster node reads the bus
    /// streams of the runners followed (``followedRunners``) and looks again only when this moved.
    package internal(set) var followGeneration = 0
    /// Device tokens (by hash): the runner each posts for, its label, and what was last heard from its phone
    /// (that in memory only: empty after a restart); loaded at start, kept in step by `device:`/`undevice:`.
    var deviceRoster: [String: DeviceRosterEntry] = [:]
    /// Names the store lacked at the last look (cleared every second).
    package var unknownNames: Set<String> = []
    /// Race courses runners asked for (`course:`), read from the store once each.
    package var courses: [String: Course] = [:]
    /// Course names the store lacked at the last look (cleared every second).
    var unknownCourses: Set<String> = []
    /// Set at shutdown: open runs are ended, and no command is handled any more (no new run can start).
    var isShuttingDown = false
    /// Numbers every broadcast event (an event stream's `id:`, given with ``HubEffect/broadcastBegins``;
    /// replies and catch-up lines carry no number).
    var eventSequence: UInt64 = 0
    /// Event streams among the sessions: only while there is one does a broadcast keep its typed event for the
    /// streams' JSON, so a flood of line-protocol fixes pays nothing for it.
    var eventStreams = 0
    /// Recent broadcast events per runner, for event streams resuming with `Last-Event-ID`.
    var backlogs: [String: EventBacklog] = [:]
    /// The `end:` lines of the latest runs ended, oldest first (at most 20), for the web overview.
    package var recentlyEnded: [[UInt8]] = []
    /// What cheers may go now, per sender and per runner cheered (shared by a group's loops).
    package var cheerLimits: CheerLimits
    /// Connections following everyone.
    var everyoneWatchers: Set<ConnectionID> = []
    var everyoneCoaches: Set<ConnectionID> = []
    /// With several loops: numbers events across the loops (nil with one loop: `eventSequence` counts), and
    /// the live runs other loops own, as far as their relayed events show them.
    package var sharedSequence: (() -> UInt64)?
    package var remoteRuns: [String: RemoteRun] = [:]
    /// True for the runners this loop owns (all of them with one loop).
    package var ownsRunner: (String) -> Bool = { _ in true }
    /// Every live run this loop knows, ranked (for `leaders:` and `rank:`). A stored property, not `lazy`: a
    /// lazy one is read out and written back on every change, so each fix copied the whole board.
    package var leaderboard: Leaderboard
    /// Private runners (kept beside their entries so a public runner's event costs no lookup).
    var privateRunners: Set<String> = []
    /// True when a run's figures changed since the board was last ranked (every tick).
    var isBoardChanged = false
    /// Share tokens (by hash): whose runs each opens, until when. Loaded at start, kept in step by `share:`.
    var shares: [String: ShareToken] = [:]
    /// Replays in progress, one per connection at most (each holds at most two pages of its run's fixes).
    var replays: [ConnectionID: Replay] = [:]
    /// Connections whose replay's run is being read off the loop: they count toward the cap already.
    var loadingReplays: Set<ConnectionID> = []
    /// Coaches with a checkpoint interval (`coach:NAME every=M`, `coach:* every=M`).
    var checkpointCoaches: [String: Set<ConnectionID>] = [:]
    var everyoneCheckpointCoaches: Set<ConnectionID> = []
    /// Wrong keys and tokens per source address and target (shared by a group's loops and the HTTP side).
    var wrongTokens: WrongTokenLimiter
    /// Phone apps' requests waiting for their positions to be on disk, by run.
    var pendingPhoneAnswers: [Int64: [PendingPhoneAnswer]] = [:]
    /// Alarms raised lately, so a resent one alerts once (see ``Hub/raiseAlarm(_:at:for:now:)``).
    var recentAlarms = RecentAlarms()

    /// Checks that the caller runs on the loop thread (the server's loop in production; nothing in tests).
    package var assertOnLoop: () -> Void = {}

    package init(configuration: ServerConfiguration, store: any RunStore) {
        self.configuration = configuration
        self.store = store
        leaderboard = Leaderboard(reportedPlaces: configuration.leaderboardPlaces)
        cheerLimits = CheerLimits(configuration)
        wrongTokens = WrongTokenLimiter(perMinute: configuration.deviceFailuresPerMinute)
    }

    // MARK: Connections

    /// A connection was accepted from `address` (without its port, for limits per address); an HTTP event
    /// stream says so (`eventStream`).
    package func connected(_ id: ConnectionID, address: String = "local", eventStream: Bool = false, now: Double) {
        assertOnLoop()
        let replaced = sessions.updateValue(Session(connectedAt: now, address: address, isEventStream: eventStream), forKey: id)
        if replaced?.isEventStream == true { eventStreams -= 1 }
        if eventStream { eventStreams += 1 }
    }

    /// A connection is gone (closed by either side). Its subscriptions go; a live run waits for a resume.
    package func disconnected(_ id: ConnectionID, now: Double) {
        assertOnLoop()
        guard let session = sessions.removeValue(forKey: id) else { return }
        if session.isEventStream { eventStreams -= 1 }
        for runner in session.watching { removeFollower(id, of: runner, coach: false) }
        for runner in session.coaching { removeFollower(id, of: runner, coach: true) }
        everyoneWatchers.remove(id)
        everyoneCoaches.remove(id)
        forgetCheckpoints(of: id, session)
        replays[id] = nil
        guard let name = session.name, let entry = runners[name], entry.connection == id else { return }
        entry.connection = nil
        guard let run = entry.run else { return }
        if run.id == nil {
            finish(entry, status: .discarded, reason: .discard, now: now)  // nothing started (a held fix is dropped)
        } else {
            run.disconnectedAt = now
            effects.log("runner \(name) disconnected mid-run \(run.id ?? 0); resume window \(Int(configuration.resumeWindow)) s")
        }
    }

    /// Handles one parsed command from a connection.
    package func received(_ command: Command, from id: ConnectionID, now: Double) {
        assertOnLoop()
        guard !isShuttingDown, let index = sessions.index(forKey: id) else { return }
        if let lookUp = storeLookUp(for: command, from: id) {
            effects.lookUp(lookUp, then: .command(command), from: id)
            return
        }
        // In place: reading `sessions.values[index]` copies the whole session (its sets and dictionaries
        // retained and released) twice for every fix.
        let runner = Self.activate(&sessions.values[index])
        switch command {
        case .identify(let name, let key): identify(id, name: name, key: key, now: now)
        case .location(let location): locate(id, runner, location, now: now)
        case .stop(let save): stop(id, save: save, now: now)
        case .watch(let target, let token): follow(id, target, coach: false, token: token, now: now)
        case .coach(let target, let token, let every): follow(id, target, coach: true, every: every, token: token, now: now)
        case .unwatch(let target): unfollow(id, target)
        case .cheer(let text): cheer(id, text: text, now: now)
        case .ping: send(OkEvent(what: "ping"), to: id)
        case .help: answerHelp(id)
        case .quit:
            send(OkEvent(what: "quit"), to: id)
            effects.close(id, reason: "quit")
        case .stats: answerStatistics(id)
        case .listRuns(let name, let offset, let limit): answerRuns(id, name: name, offset: offset, limit: limit)
        case .showRun(let runID): answerRun(id, runID: runID)
        case .showBadges(let name): answerBadges(id, name: name)
        case .addDevice(let label): addDevice(for: id, label: label, now: now)
        case .listDevices: listDevices(for: id)
        case .removeDevice(let token): removeDevice(token, for: id, now: now)
        case .goal(let goal): setGoal(goal, for: id)
        case .leaders(let goal): answerLeaders(id, goal: goal)
        case .courseLeaders(let course): answerCourseLeaders(id, course: course)
        case .setPrivate(let isPrivate): setPrivate(isPrivate, for: id)
        case .privacyZone(let metres): setPrivacyZone(metres, for: id)
        case .share(let seconds): share(seconds, for: id, now: now)
        case .unshare(let token): unshare(token, for: id, now: now)
        case .replay(let runID, let speed): replay(runID, speed: speed, for: id, now: now)
        case .course(let name): setCourse(named: name, for: id)
        }
    }

    /// Marks a session active (it sent a valid command) and gives its runner, without copying the session.
    private static func activate(_ session: inout Session) -> RunnerEntry? {
        if !session.isActive { session.isActive = true }
        return session.runner
    }

    /// Once a second: idle connections and expired resume windows.
    package func tick(now: Double) {
        assertOnLoop()
        unknownNames.removeAll(keepingCapacity: false)
        unknownCourses.removeAll(keepingCapacity: false)
        expireShares(now: now)
        announceRanks()
        for (id, session) in sessions where !session.isActive && now - session.connectedAt >= configuration.idleTimeout {
            fail(id, .idle, "no command within \(Int(configuration.idleTimeout)) s")
            effects.close(id, reason: "idle")
            sessions[id]?.isActive = true  // closed once, not every tick until the socket goes
        }
        let forgetBefore = finishedRuns.firstIndex { now - $0.at < 60 } ?? finishedRuns.count
        for finished in finishedRuns[..<forgetBefore] where !isLocalRun(finished.id) {
            if let name = runOwners.removeValue(forKey: finished.id), runners[name]?.run == nil { backlogs[name] = nil }
        }
        finishedRuns.removeFirst(forgetBefore)
        for entry in runners.values {
            guard let run = entry.run else { continue }
            if let late = run.lateArrival, now - late >= 1 { remeasure(entry, now: now) }
            if let caughtUp = run.catchUpAt, now - caughtUp >= 1, let snapshot = run.tracker.snapshot {
                // The burst of a backlog is over: the board takes the run where it now is.
                run.catchUpAt = nil
                rank(entry.name, distance: snapshot.distance, elapsed: snapshot.elapsed, moving: snapshot.movingTime,
                     goal: entry.goal?.distance)
            }
            if let last = run.lastDeviceFixAt, entry.connection == nil, now - last >= configuration.deviceIdle {
                finish(entry, status: .saved, reason: .idle, now: now)
                continue
            }
            guard let since = run.disconnectedAt, run.lastDeviceFixAt == nil,
                  now - since >= configuration.resumeWindow else { continue }
            finish(entry, status: .timedOut, reason: .timeout, now: now)
        }
    }

    /// Ends every open run as saved and stops handling commands (shutdown).
    package func finishAllRuns(now: Double) {
        isShuttingDown = true
        for entry in runners.values where entry.run?.id != nil {
            finish(entry, status: .saved, reason: .shutdown, now: now)
        }
    }

    // MARK: Output helpers

    /// Sends one event to one connection.
    package func send(_ event: some WireEvent, to id: ConnectionID) {
        send(Self.line(event), to: id)
    }

    /// Sends a reply that says a change was stored, once it is (see ``HubEffect/sendOnceStored(_:to:as:)``).
    func sendOnceStored(_ event: some WireEvent, to id: ConnectionID) {
        effects.sendOnceStored([Self.line(event)], to: id, as: .reply)
    }

    /// Sends one formatted line to one connection.
    func send(_ line: [UInt8], to id: ConnectionID, as role: LineRole = .reply) {
        statistics.eventsSent += 1
        effects.send(line, to: id, as: role)
    }

    /// True for the connection of a runner with a run going: not closed at the hard limit for what others send
    /// it (see ``ServerConfiguration/stalledRunnerTimeout``).
    package func isRunnersOwnConnection(_ id: ConnectionID) -> Bool {
        sessions[id]?.runner.map { $0.connection == id && $0.run != nil } ?? false
    }

    /// The runner entry a connection speaks for (its `iam:` proved the name), or nil after answering
    /// `err:not_identified` for the runner's own command `word`.
    func ownEntry(_ id: ConnectionID, for word: String, asking identify: String = "iam:NAME KEY") -> RunnerEntry? {
        guard let name = sessions[id]?.name, let entry = runners[name], entry.connection == id else {
            fail(id, .notIdentified, "send \(identify) before \(word):")
            return nil
        }
        return entry
    }

    /// Answers a wrong key or share token tried for `target`, counted per connection, source address and
    /// target (``WrongTokenLimiter``): at once, after the limiter's delay (the connection's later commands
    /// wait), or refused; a connection that gave the limit of them, or was refused, is closed. Only ever after
    /// the key or token was checked: a right one is never held up by a guesser behind the same address.
    func guessedWrong(_ id: ConnectionID, target: String, _ reason: String, now: Double) {
        guard let index = sessions.index(forKey: id) else { return }
        let answer = Self.line(ErrorEvent(code: .wrongKey, reason: reason))
        // An event stream's token was counted as the stream opened.
        guard !sessions.values[index].isEventStream else { return fail(id, .wrongKey, reason) }
        sessions.values[index].wrongGuesses += 1
        let verdict = wrongTokens.wrong(from: sessions.values[index].address, target: target, now: now)
        let closes = sessions.values[index].wrongGuesses >= configuration.deviceFailuresPerMinute || verdict == .refuse
        switch verdict {
        case .answer:
            fail(id, .wrongKey, reason)
        case .slow(let seconds):
            statistics.errorsSent += 1
            statistics.eventsSent += 1
            effects.answerLater(answer, to: id, after: seconds, thenClose: closes)
            return
        case .refuse:
            fail(id, .wrongKey, "too many wrong keys or tokens: wait a minute")
        }
        if closes { effects.close(id, reason: "guessing keys or tokens") }
    }

    /// Answers a connection with `err:CODE "reason"`.
    package func fail(_ id: ConnectionID, _ code: ErrorCode, _ reason: String) {
        statistics.errorsSent += 1
        send(ErrorEvent(code: code, reason: reason), to: id)
        effects.errorSent(to: id)
    }

    /// The audiences of a runner's event.
    package enum Audience: Sendable {
        /// The runner and its spectators (pace, split, cheers).
        case spectators
        /// The runner, its spectators and its coaches (run, badge, end).
        case everyone
        /// Its coaches only (alerts).
        case coaches
    }

    /// Keeps an event in the runner's backlog, for event streams that reconnect with `Last-Event-ID`.
    func keep(_ line: [UInt8], sequence: UInt64, as role: LineRole, inBacklogOf runner: String) {
        // Changed in place; `[runner, default: …]` would put its autoclosure on the heap for every event.
        if let index = backlogs.index(forKey: runner) {
            backlogs.values[index].append(sequence, line, as: role)
        } else {
            var backlog = EventBacklog(capacity: configuration.eventBacklog)
            backlog.append(sequence, line, as: role)
            backlogs[runner] = backlog
        }
    }

    /// Marks the sends that follow as broadcast event `sequence` for the event streams here (their `id:`, and
    /// `typed`, the event their JSON is written from); with no stream here nothing is marked, and a flood of
    /// line-protocol fixes pays nothing for it. True when marked: ``endBroadcast(_:)`` takes it.
    func beginBroadcast(_ sequence: UInt64, typed: @autoclosure () -> TypedBroadcast? = nil) -> Bool {
        guard eventStreams > 0 else { return false }
        effects.broadcastBegins(sequence: sequence, typed: typed())
        return true
    }

    /// Ends the broadcast ``beginBroadcast(_:typed:)`` marked (`begun`).
    func endBroadcast(_ begun: Bool) {
        if begun { effects.broadcastEnds() }
    }

    /// Sends a runner's event to the runner's connection and its audience, each connection once (and never to
    /// `sender`), remembers it for event streams that resume, and with several loops relays it to the others.
    /// `ownLine`: what the runner's own connection gets instead (the whole truth, where a privacy zone hides
    /// positions from the others).
    func broadcast(_ line: [UInt8], about runner: String, entry: RunnerEntry? = nil, to audience: Audience,
                   droppable: Bool = false, except sender: ConnectionID? = nil, ownLine: [UInt8]? = nil,
                   relaying kind: RelayedEvent.Kind = .other, event: @autoclosure () -> ServerEvent? = nil) {
        let sequence = sharedSequence?() ?? eventSequence + 1
        eventSequence = max(eventSequence, sequence)
        let begun = beginBroadcast(sequence, typed: event().map { TypedBroadcast(line: line, event: $0) })
        defer { endBroadcast(begun) }
        let runnerEntry = entry ?? runners[runner]
        // Only runs are remembered: a cheer to a name that never ran must not make a backlog appear.
        // Alerts are for coaches: a resuming spectator's stream must not replay them.
        if audience != .coaches, runnerEntry?.run != nil || remoteRuns[runner] != nil {
            keep(line, sequence: sequence, as: LineRole.of(line, about: runner, droppable: droppable), inBacklogOf: runner)
        }
        deliver(line, about: runner, own: runnerEntry?.connection ?? sender, to: audience, droppable: droppable,
                except: sender, ownLine: ownLine)
        if sharedSequence != nil {
            effects.relay(.event(RelayedEvent(runner: runner, line: line, audience: audience, sequence: sequence,
                                             kind: kind)))
        }
    }

    /// Delivers an event to `own` (the runner's connection) and the audience of `runner` on this loop. A
    /// connection in several audiences is skipped by the later ones, so nothing is built per event.
    func deliver(_ line: [UInt8], about runner: String, own: ConnectionID?, to audience: Audience, droppable: Bool,
                 except sender: ConnectionID? = nil, ownLine: [UInt8]? = nil) {
        let role = LineRole.of(line, about: runner, droppable: droppable)
        if isPrivate(runner) {
            return deliverPrivately(line, about: runner, own: own, to: audience, droppable: droppable, except: sender,
                                    ownLine: ownLine)
        }
        // Empty audiences are skipped before they are touched: an absent set read as `?? []` is the runtime's
        // immortal empty singleton, whose every retain and release takes the slow path (a few % of a flood).
        if audience == .coaches {
            let coaching = coaches[runner]
            if let coaching {
                for id in coaching where id != sender { send(line, to: id, as: role) }
            }
            if !everyoneCoaches.isEmpty {
                for id in everyoneCoaches where id != sender && coaching?.contains(id) != true {
                    send(line, to: id, as: role)
                }
            }
            return
        }
        // The runner's own copy is queued last: peers are written in the order they got output this turn, and
        // the watchers' copies are the ones somebody is waiting for (the runner has its position already).
        defer { if let own, own != sender { send(ownLine ?? line, to: own, as: role) } }
        let direct = watchers[runner]
        if let direct {
            for id in direct where id != own && id != sender { send(line, to: id, as: role) }
        }
        if !everyoneWatchers.isEmpty {
            for id in everyoneWatchers where id != own && id != sender && direct?.contains(id) != true {
                send(line, to: id, as: role)
            }
        }
        guard audience == .everyone else { return }
        let coaching = coaches[runner]
        if let coaching {
            for id in coaching where id != own && direct?.contains(id) != true && !everyoneWatchers.contains(id) {
                send(line, to: id, as: role)
            }
        }
        if !everyoneCoaches.isEmpty {
            for id in everyoneCoaches where id != own && direct?.contains(id) != true && !everyoneWatchers.contains(id)
                && coaching?.contains(id) != true {
                send(line, to: id, as: role)
            }
        }
    }

    /// `deliver` for a private runner: the same audience, less everyone who may not see it.
    private func deliverPrivately(_ line: [UInt8], about runner: String, own: ConnectionID?, to audience: Audience,
                                  droppable: Bool, except sender: ConnectionID?, ownLine: [UInt8]?) {
        let role = LineRole.of(line, about: runner, droppable: droppable)
        var recipients: Set<ConnectionID> = []
        if audience != .coaches {
            if let own { recipients.insert(own) }
            recipients.formUnion(watchers[runner] ?? [])
            recipients.formUnion(everyoneWatchers)
        }
        if audience != .spectators {
            recipients.formUnion(coaches[runner] ?? [])
            recipients.formUnion(everyoneCoaches)
        }
        if let sender { recipients.remove(sender) }
        for id in recipients.sorted() where id == own || mayFollow(runner, id) {
            send(id == own ? ownLine ?? line : line, to: id, as: role)
        }
    }

    /// The runner entry for a name: in memory, else from the store. Store failures answer the connection.
    func runnerEntry(named name: String, for id: ConnectionID) -> RunnerEntry?? {
        if let entry = runners[name] { return entry }
        // Names the store did not know are remembered for a second, so asking about them in a loop does not
        // put a disk read on the loop each time (a runner another process imports shows up a second later).
        if unknownNames.contains(name) { return .some(nil) }
        do {
            guard let record = try store.runner(named: name) else {
                if unknownNames.count < 10_000 { unknownNames.insert(name) }
                return .some(nil)
            }
            return remember(record)
        } catch {
            fail(id, .storage, "storage: \(error.message)")
            effects.log("store read failed for runner \(name): \(error)")
            return nil
        }
    }
}
