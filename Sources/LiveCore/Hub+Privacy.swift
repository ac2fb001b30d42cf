import RunStore
import Wire

// Private runners and their share links: who may follow a runner, and what happens when that changes.
//
// The rule everywhere: to anyone who may not see a private runner, it is a runner that does not exist. Its
// events are not delivered, it is not listed, and every question about it gets the unknown name's answer.

extension Hub {
    // MARK: Who sees whom

    /// True for a runner whose runs only it and its share links' holders see.
    package func isPrivate(_ name: String) -> Bool {
        !privateRunners.isEmpty && privateRunners.contains(name)
    }

    /// True when connection `id` may see runner `name`: a public runner, the runner itself (its identified
    /// connection), or a follower holding one of its share tokens.
    package func mayFollow(_ name: String, _ id: ConnectionID) -> Bool {
        guard isPrivate(name) else { return true }
        guard let session = sessions[id] else { return false }
        if session.name == name { return true }
        guard let hash = session.grants[name] else { return false }
        return shares[hash]?.runner == name
    }

    /// The share `token` opens when it is one not revoked or expired; nil otherwise. The stored hash is compared
    /// in constant time (the dictionary finds it by the hash, which tells a guesser nothing of the token).
    package func liveShare(_ token: String, now: Double) -> ShareToken? {
        guard Command.isValidKey(token), let share = shares[RunnerKey.hash(token)],
              RunnerKey.verify(token, against: share.hash), share.expires > now else { return nil }
        return share
    }

    /// The hash of `token` when it is a live share token of `name`; nil otherwise.
    func shareHash(_ token: String, of name: String, now: Double) -> String? {
        guard let share = liveShare(token, now: now), share.runner == name else { return nil }
        return share.hash
    }

    /// The live runners connection `id` may see.
    package func visibleLiveRunnerNames(for id: ConnectionID?) -> [String] {
        liveRunnerNames.filter { name in !isPrivate(name) || id.map { mayFollow(name, $0) } == true }
    }

    /// Checks `token` for `watch:NAME TOKEN` / `coach:NAME TOKEN`: true (and the grant kept) when valid; else the
    /// follower is told, as for any wrong token whatever the runner, and the guess is counted.
    func grant(_ token: String, of name: String, to id: ConnectionID, now: Double) -> Bool {
        guard let hash = shareHash(token, of: name, now: now) else {
            guessedWrong(id, target: name, "no valid share link of \(name) with that token", now: now)
            return false
        }
        sessions[id]?.grants[name] = hash
        return true
    }

    // MARK: Commands of the runner

    /// `private:on` / `private:off`.
    func setPrivate(_ isPrivate: Bool, for id: ConnectionID) {
        guard let entry = ownEntry(id, for: "private") else { return }
        var privacy = entry.privacy
        privacy.isPrivate = isPrivate
        savePrivacy(privacy, of: entry)
        sendOnceStored(OkEvent(what: "private", fields: [.yesNo("private", isPrivate)]), to: id)
    }

    /// `privacy:METRES`.
    func setPrivacyZone(_ metres: Double, for id: ConnectionID) {
        guard let entry = ownEntry(id, for: "privacy") else { return }
        var privacy = entry.privacy
        privacy.zone = metres
        savePrivacy(privacy, of: entry)
        sendOnceStored(OkEvent(what: "privacy", fields: [.number("zone", metres, 0)]), to: id)
    }

    private func savePrivacy(_ privacy: RunnerPrivacy, of entry: RunnerEntry) {
        store.submit(.privacy(runner: entry.name, privacy))
        effects.relay(.runner(name: entry.name, keyHash: entry.keyHash, history: entry.history, privacy: privacy))
        privacyChanged(entry.name, to: privacy)
        effects.log("runner \(entry.name) is \(privacy.isPrivate ? "private" : "public"), privacy zone \(Int(privacy.zone)) m")
    }

    /// A runner's privacy as it now is (here or on another loop): the set of private runners and the board.
    func privacyChanged(_ name: String, to privacy: RunnerPrivacy) {
        if let entry = runners[name] {
            if entry.privacy.zone != privacy.zone, let run = entry.run {
                // A new zone applies from the next fix; it cannot hide what was already shown.
                run.zoneDelay = privacy.zone > 0 ? PrivacyZone.Delay(PrivacyZone(metres: privacy.zone)) : nil
            }
            entry.privacy = privacy
        }
        let wasPrivate = privateRunners.contains(name)
        guard privacy.isPrivate != wasPrivate else { return }
        if privacy.isPrivate {
            privateRunners.insert(name)
            unrank(name)
        } else {
            privateRunners.remove(name)
            if let run = liveRun(of: name) {
                rank(name, distance: run.distance, elapsed: run.elapsed, moving: run.movingTime,
                     goal: runners[name]?.goal?.distance ?? remoteRuns[name]?.goal)
            }
        }
    }

    /// `share:` / `share:SECONDS`: a new share token, shown once (only its hash is kept).
    func share(_ seconds: Double?, for id: ConnectionID, now: Double) {
        guard let entry = ownEntry(id, for: "share") else { return }
        let token = RunnerKey.generate()
        let expires = (now + (seconds ?? Command.Limits.defaultShare)).rounded(.down)
        let share = ShareToken(hash: RunnerKey.hash(token), runner: entry.name, created: now, expires: expires)
        shares[share.hash] = share
        store.submit(.share(share))
        effects.relay(.shares(runner: entry.name, added: share, removed: []))
        sendOnceStored(OkEvent(what: "share", fields: [Event.Field("token", token),
                                                       Event.Field("expires", ISODate.string(unixSeconds: expires))]), to: id)
        effects.log("runner \(entry.name) made a share link until \(ISODate.string(unixSeconds: expires))")
    }

    /// `unshare:TOKEN` / `unshare:*`: revokes one share token or all of the runner's, at once.
    func unshare(_ token: String?, for id: ConnectionID, now: Double) {
        guard let entry = ownEntry(id, for: "unshare") else { return }
        let hashes: [String]
        if let token {
            let hash = RunnerKey.hash(token)
            guard shares[hash]?.runner == entry.name else {
                fail(id, .notFound, "no such share token of \(entry.name)")
                return
            }
            hashes = [hash]
        } else {
            hashes = shares.values.filter { $0.runner == entry.name }.map(\.hash)
        }
        store.submit(.revokeShare(runner: entry.name, tokenHash: token.map(RunnerKey.hash), at: now))
        effects.relay(.shares(runner: entry.name, added: nil, removed: hashes))
        revoke(hashes)
        sendOnceStored(OkEvent(what: "unshare", fields: [.integer("count", hashes.count)]), to: id)
    }

    /// Share tokens gone (revoked here or on another loop, or expired): their holders lose the runner at once.
    func revoke(_ hashes: [String]) {
        guard !hashes.isEmpty else { return }
        let gone = Set(hashes)
        for hash in hashes { shares[hash] = nil }
        for (id, session) in sessions {
            for (name, hash) in session.grants where gone.contains(hash) {
                sessions[id]?.grants[name] = nil
                guard isPrivate(name), session.watching.contains(name) || session.coaching.contains(name) else { continue }
                if session.isEventStream {
                    effects.close(id, reason: "share link revoked")
                } else {
                    unfollow(id, .runner(name), quietly: true)
                    fail(id, .revoked, "the share link of \(name) was revoked or has expired")
                }
            }
        }
    }

    /// Once a second: share tokens past their time go as if revoked.
    func expireShares(now: Double) {
        guard !shares.isEmpty else { return }
        let expired = shares.values.filter { $0.expires <= now }.map(\.hash)
        revoke(expired)
    }

    /// Another loop issued or revoked share tokens.
    func relayedShares(of runner: String, added: ShareToken?, removed: [String]) {
        if let added { shares[added.hash] = added }
        revoke(removed)
    }

    /// Loads the share tokens not revoked (at start), and the private runners, so no follow reads the store.
    package func loadShares(now: Double) {
        do {
            for share in try store.shareTokens() where share.expires > now {
                shares[share.hash] = share
                if runners[share.runner] == nil, let record = try store.runner(named: share.runner) {
                    remember(record)
                }
            }
        } catch {
            effects.log("share tokens not loaded: \(error)")
        }
    }

    /// A stored runner known here from now on, its privacy with it.
    @discardableResult
    func remember(_ record: RunnerRecord) -> RunnerEntry {
        let entry = RunnerEntry(record)
        runners[record.name] = entry
        if record.privacy.isPrivate { privateRunners.insert(record.name) }
        return entry
    }
}

extension RunOwner {
    /// Off the loop, the rule of ``Hub/mayFollow(_:_:)`` on what the store says: a public runner, or a private
    /// one among `visible` (the asking connection's own name and its share links' runners).
    package func may(beReadBy visible: Set<String>) -> Bool {
        !privacy.isPrivate || visible.contains(runner)
    }
}
