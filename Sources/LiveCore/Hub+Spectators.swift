import Wire

extension Hub {
    /// `watch:` / `coach:`: follow one runner or everyone. A runner already running is shown at once.
    /// `token`: a private runner's share token (`watch:NAME TOKEN`), checked first.
    func follow(_ id: ConnectionID, _ target: WatchTarget, coach: Bool, every: Double? = nil, token: String? = nil,
                now: Double = 0) {
        let what = coach ? "coach" : "watch"
        switch target {
        case .everyone:
            if coach {
                sessions[id]?.coachesEveryone = true
                everyoneCoaches.insert(id)
            } else {
                sessions[id]?.watchesEveryone = true
                everyoneWatchers.insert(id)
            }
            if coach { setCheckpoints(every, for: id, target: target) }
            send(OkEvent(what: what, fields: [.init(key: "target", value: "*")] + Self.everyField(every)), to: id)
            for name in visibleLiveRunnerNames(for: id).sorted() { catchUp(id, on: name, withPace: !coach) }
            // A spectator of everyone also gets the board as it stands (`was` = `pos`: no change), so it can
            // place every runner before the next `rank:` moves one.
            if !coach {
                for (runner, standing) in leaderboard.standings(goal: nil, limit: configuration.leaderboardPlaces).standings {
                    send(RankEvent(runner: runner, previous: standing.position, standing: standing), to: id)
                }
            }
        case .runner(let name):
            if let token, !grant(token, of: name, to: id, now: now) { return }
            let following = (sessions[id]?.watching.count ?? 0) + (sessions[id]?.coaching.count ?? 0)
            // Following a name again adds nothing, so the cap does not refuse it.
            let again = (coach ? sessions[id]?.coaching : sessions[id]?.watching)?.contains(name) == true
            guard again || following < configuration.maximumFollowedRunners else {
                fail(id, .badArgument, "at most \(configuration.maximumFollowedRunners) runners per connection: use watch:*")
                return
            }
            if coach {
                sessions[id]?.coaching.insert(name)
            } else {
                sessions[id]?.watching.insert(name)
            }
            addFollower(id, of: name, coach: coach)
            if coach { setCheckpoints(every, for: id, target: target) }
            send(OkEvent(what: what, fields: [.init(key: "target", value: name)] + Self.everyField(every)), to: id)
            catchUp(id, on: name, withPace: !coach)
        }
    }

    /// `every=M` in `ok:coach` for a checkpoint interval.
    private static func everyField(_ every: Double?) -> [Event.Field] {
        every.map { [.number("every", $0, 0)] } ?? []
    }

    /// A late follower gets the runner's `run:`, the run's `badge:` lines so far (and the latest `pace:` for
    /// spectators) at once, so it shows the whole run, not only what comes next.
    private func catchUp(_ id: ConnectionID, on name: String, withPace: Bool) {
        guard mayFollow(name, id), let run = liveRun(of: name), let started = run.startedLine else { return }
        send(started, to: id, as: .event(about: name))
        for badge in run.badgeLines { send(badge, to: id, as: .event(about: name)) }
        for point in run.pointLines { send(point, to: id, as: .event(about: name)) }
        if withPace, let pace = run.latestPaceLine { send(pace, to: id, as: .pace(of: name)) }
        catchUpDeviceAlerts(id, on: name)
    }

    /// A connection moved here from another loop: what it followed there, it follows here (nothing is sent).
    package func restore(_ follows: Session, for id: ConnectionID) {
        var session = follows
        session.runner = nil
        sessions[id] = session
        for name in session.watching { addFollower(id, of: name, coach: false) }
        for name in session.coaching { addFollower(id, of: name, coach: true) }
        if session.watchesEveryone { everyoneWatchers.insert(id) }
        if session.coachesEveryone { everyoneCoaches.insert(id) }
        for (name, every) in session.checkpointEvery { setCheckpoints(every, for: id, target: .runner(name)) }
        if let every = session.everyoneCheckpointEvery { setCheckpoints(every, for: id, target: .everyone) }
    }

    /// `unwatch:`: stops both watching and coaching the target.
    /// `quietly`: a revoked share link's follower, told with `err:revoked` instead of `ok:unwatch`.
    func unfollow(_ id: ConnectionID, _ target: WatchTarget, quietly: Bool = false) {
        switch target {
        case .everyone:
            sessions[id]?.watchesEveryone = false
            sessions[id]?.coachesEveryone = false
            everyoneWatchers.remove(id)
            everyoneCoaches.remove(id)
            setCheckpoints(nil, for: id, target: .everyone)
            send(OkEvent(what: "unwatch", fields: [.init(key: "target", value: "*")]), to: id)
        case .runner(let name):
            sessions[id]?.watching.remove(name)
            sessions[id]?.coaching.remove(name)
            removeFollower(id, of: name, coach: false)
            removeFollower(id, of: name, coach: true)
            setCheckpoints(nil, for: id, target: target)
            sessions[id]?.grants[name] = nil
            if !quietly { send(OkEvent(what: "unwatch", fields: [.init(key: "target", value: name)]), to: id) }
        }
    }

    /// A cheer from the runner's page (no connection of the hub's) from `address` to `runner`: nil when it may
    /// go now (tokens taken), else why not.
    package func admitPageCheer(from address: String, to runner: String, now: Double) -> String? {
        if let refusal = cheerLimits.admitSender(nil, address: address, now: now) { return refusal }
        return cheerLimits.admit(to: runner, from: address, now: now) ? nil
            : cheerLimits.runnerRefusal(runner, from: address, now: now)
    }

    /// Sends a cheer to a runner's connection and spectators (and keeps it for late web viewers of the run).
    package func relayCheer(to runner: String, from sender: String, text: String, except id: ConnectionID? = nil) {
        let cheer = CheerEvent(runner: runner, from: sender, text: text), line = Self.line(cheer)
        if let run = runners[runner]?.run { Self.keep(cheer: line, in: &run.cheerLines) }
        if let remote = remoteRuns[runner] { Self.keep(cheer: line, in: &remote.cheerLines) }
        broadcast(line, about: runner, to: .spectators, except: id, relaying: .cheer, event: .cheer(cheer))
    }

    /// `msg:`: a cheer. From a runner with a live run it goes to the runner's own audience; from anyone else
    /// to every runner the sender watches (with `watch:*`, every runner with a live run) and their audiences.
    /// The sender gets `ok:msg count=N` (runners reached), not its own words back. Limited per connection,
    /// source address, and runner running per address (``CheerLimits``): a runner that had that address's share
    /// is skipped.
    func cheer(_ id: ConnectionID, text: String, now: Double) {
        guard let session = sessions[id] else { return }
        let address = session.address
        if let refusal = cheerLimits.admitSender(id, address: address, now: now) {
            fail(id, .busy, refusal)
            return
        }
        let sender = session.name ?? "anon"
        var targets: [String]
        if let name = session.name, runners[name]?.run?.id != nil {
            targets = [name]
        } else if session.watchesEveryone || session.coachesEveryone {
            targets = visibleLiveRunnerNames(for: id).sorted()
        } else {
            targets = session.watching.union(session.coaching).sorted()
        }
        guard !targets.isEmpty else {
            fail(id, .notFound, "no one to cheer: watch a runner first")
            return
        }
        // A private runner the sender may not see is counted like a name nobody runs under, and hears nothing;
        // only runners it may see with a run going have a share to use up, so no limit tells them apart.
        var skipped: [String] = []
        for runner in targets where mayFollow(runner, id) {
            if liveRun(of: runner) != nil, !cheerLimits.admit(to: runner, from: address, now: now) {
                skipped.append(runner)
                continue
            }
            relayCheer(to: runner, from: sender, text: text, except: id)
        }
        guard skipped.count < targets.count else {
            fail(id, .busy, cheerLimits.runnerRefusal(skipped[0], from: address, now: now))
            return
        }
        send(OkEvent(what: "msg", fields: [.init(key: "count", value: String(targets.count - skipped.count))]), to: id)
    }
}
