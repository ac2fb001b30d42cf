import RunCore
import RunStore
import Wire

/// Phone apps that post positions over HTTP (OsmAnd, Traccar Client, OwnTracks): their tokens, and their
/// fixes through the same engine, store, badges and broadcast as a `loc:` line.
extension Hub {
    /// `device:` / `device:LABEL` from the connection that holds a runner: a new token, shown once (only its hash
    /// is kept), with the label the runner knows the phone by.
    func addDevice(for id: ConnectionID, label: String?, now: Double) {
        guard let name = ownEntry(id, for: "device")?.name else { return }
        let token = issueDeviceToken(for: name, label: label, now: now)
        sendOnceStored(OkEvent(what: "device", fields: [.init(key: "token", value: token)]), to: id)
        effects.log("\(name) added a device token")
    }

    /// `device:list`: one `device:` line per token of the runner, oldest first, then `done:device`.
    func listDevices(for id: ConnectionID) {
        guard let name = ownEntry(id, for: "device")?.name else { return }
        let phones = deviceEvents(of: name)
        for phone in phones { send(phone, to: id) }
        send(DoneEvent(what: "device", count: phones.count, more: false), to: id)
    }

    /// `undevice:TOKEN` / `undevice:ID` / `undevice:*`: revokes one of the runner's device tokens (named by the
    /// token, or by the id `device:list` shows: its hash's first 8 hex digits), or all of them.
    func removeDevice(_ token: String?, for id: ConnectionID, now: Double) {
        guard let name = ownEntry(id, for: "undevice")?.name else { return }
        let hashes: [String]
        if let token {
            guard let hash = deviceHash(named: token, of: name) else {
                fail(id, .notFound, "no such device token of \(name)")
                return
            }
            hashes = [hash]
        } else {
            hashes = deviceRoster.filter { $0.value.token.runner == name }.map(\.key)
        }
        for hash in hashes { forgetDevice(hash) }
        effects.relay(.devicesRemoved(hashes: hashes))
        store.submit(.revokeDevice(runner: name, tokenHash: token == nil ? nil : hashes[0], at: now))
        sendOnceStored(OkEvent(what: "undevice", fields: [.init(key: "count", value: String(hashes.count))]), to: id)
    }

    /// The hash of the runner's token named by `text`: the token itself, or the 8 hex digits `device:list`
    /// shows (when exactly one of the runner's tokens starts so); nil for none.
    private func deviceHash(named text: String, of name: String) -> String? {
        let hash = RunnerKey.hash(text)
        if deviceRoster[hash]?.token.runner == name { return hash }
        guard text.utf8.count == 8, text.utf8.allSatisfy({ ($0 &- 48) < 10 || (($0 | 0x20) &- 97) < 6 }) else { return nil }
        let id = text.lowercased()
        let matching = deviceRoster.filter { $0.value.token.runner == name && $0.key.hasPrefix(id) }
        return matching.count == 1 ? matching.first?.key : nil
    }

    /// True when `key` is the key of runner `name` (over HTTP, from the runner's page).
    package func isProved(runner name: String, key: String) -> Bool {
        guard let entry = runners[name], Command.isValidKey(key) else { return false }
        return RunnerKey.verify(key, against: entry.keyHash)
    }

    /// Makes, remembers and stores a new device token of `name` (only its hash is kept); the token, to show once.
    package func issueDeviceToken(for name: String, label: String?, now: Double) -> String {
        let token = RunnerKey.generate()
        let record = DeviceToken(hash: RunnerKey.hash(token), runner: name, created: now, label: label)
        rememberDevice(record)
        effects.relay(.deviceAdded(record))
        store.submit(.device(record))
        return token
    }

    /// Knows a device token from now on (issued here, loaded, or relayed from another loop).
    func rememberDevice(_ token: DeviceToken) {
        deviceRoster[token.hash] = DeviceRosterEntry(token: token)
    }

    /// Forgets a revoked device token, and what its phone last said.
    func forgetDevice(_ hash: String) {
        deviceRoster[hash] = nil
    }

    /// Ends a runner's live run (saved) for the runner's page (its key already proved); the run's id, or nil
    /// without a run.
    package func stopRun(runner name: String, now: Double) -> Int64? {
        guard let entry = runners[name], let run = entry.run else { return nil }
        guard let runID = run.id else {
            // Only a held stale fix, or nothing yet: no run to save; what is held is dropped (as `stop:` does).
            finish(entry, status: .discarded, reason: .discard, now: now)
            return nil
        }
        finish(entry, status: .saved, reason: .stop, now: now)
        return runID
    }

    /// The runner a device token posts for (nil for an unknown or revoked token).
    package func runner(forDeviceToken token: String) -> RunnerEntry? {
        runnerName(forDeviceToken: token).flatMap { runners[$0] }
    }

    /// The name a device token posts for (nil for an unknown or revoked token).
    package func runnerName(forDeviceToken token: String) -> String? {
        guard Command.isValidKey(token) else { return nil }
        return deviceRoster[RunnerKey.hash(token)]?.token.runner
    }

    /// Loads every device token (at start), and the runners they post for, so no device request reads the
    /// store on the loop.
    package func loadDevices() {
        do {
            for token in try store.deviceTokens() {
                rememberDevice(token)
                if runners[token.runner] == nil, let record = try store.runner(named: token.runner) {
                    remember(record)
                }
            }
        } catch {
            effects.log("device tokens not loaded: \(error)")
        }
    }
}
