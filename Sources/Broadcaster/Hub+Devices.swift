import RunCore
import RunStore
import Wire

/// Phone apps that post positions over HTTP (OsmAnd, Traccar Client, OwnTracks): their tokens, and their
/// fixes through the same engine, store, badges and broadcast as a `loc:` line.
extension Hub {
    /// `device:` from the connection that holds a runner: a new token, shown once (only its hash is kept).
    func addDevice(for id: ConnectionID, now: Double) {
        guard let name = ownEntry(id, for: "device")?.name else { return }
        let token = issueDeviceToken(for: name, now: now)
        send(OkEvent(what: "device", fields: [.init(key: "token", value: token)]), to: id)
        output.log("\(name) added a device token")
    }

    /// `undevice:TOKEN` / `undevice:*`: revokes one of the runner's device tokens, or all of them.
    func removeDevice(_ token: String?, for id: ConnectionID, now: Double) {
        guard let name = ownEntry(id, for: "undevice")?.name else { return }
        let hashes: [String]
        if let token {
            let hash = RunnerKey.hash(token)
            guard devices[hash] == name else {
                fail(id, .notFound, "no such device token of \(name)")
                return
            }
            hashes = [hash]
        } else {
            hashes = devices.filter { $0.value == name }.map(\.key)
        }
        for hash in hashes { devices[hash] = nil }
        output.relay(.devicesRemoved(hashes: hashes))
        store.submit(.revokeDevice(runner: name, tokenHash: token.map(RunnerKey.hash), at: now))
        send(OkEvent(what: "undevice", fields: [.init(key: "count", value: String(hashes.count))]), to: id)
    }

    /// A new device token for a runner proved by its key over HTTP (the page's "Connect a phone" box); nil for
    /// an unknown runner or a wrong key (the same answer for both).
    func addDevice(runner name: String, key: String, now: Double) -> String? {
        guard let entry = runners[name], Command.isValidKey(key), RunnerKey.verify(key, against: entry.keyHash) else {
            return nil
        }
        return issueDeviceToken(for: name, now: now)
    }

    /// Makes, remembers and stores a new device token of `name` (only its hash is kept); the token, to show once.
    private func issueDeviceToken(for name: String, now: Double) -> String {
        let token = RunnerKey.generate()
        let hash = RunnerKey.hash(token)
        devices[hash] = name
        output.relay(.deviceAdded(hash: hash, runner: name))
        store.submit(.device(DeviceToken(hash: hash, runner: name, created: now)))
        return token
    }

    /// Ends a runner's live run (saved) for a key proved over HTTP (the page's stop button); the run's id, or nil
    /// for a wrong key or no run.
    func stopRun(runner name: String, key: String, now: Double) -> Int64?? {
        guard let entry = runners[name], Command.isValidKey(key), RunnerKey.verify(key, against: entry.keyHash) else {
            return nil
        }
        guard let runID = entry.run?.id else { return .some(nil) }
        finish(entry, status: .saved, reason: .stop, now: now)
        return runID
    }

    /// The runner a device token posts for (nil for an unknown or revoked token).
    func runner(forDeviceToken token: String) -> RunnerEntry? {
        runnerName(forDeviceToken: token).flatMap { runners[$0] }
    }

    /// The name a device token posts for (nil for an unknown or revoked token).
    func runnerName(forDeviceToken token: String) -> String? {
        guard Command.isValidKey(token) else { return nil }
        return devices[RunnerKey.hash(token)]
    }

    /// Loads every device token (at start), and the runners they post for, so no device request reads the
    /// store on the loop.
    func loadDevices() {
        do {
            for token in try store.deviceTokens() {
                devices[token.hash] = token.runner
                if runners[token.runner] == nil, let record = try store.runner(named: token.runner) {
                    remember(record)
                }
            }
        } catch {
            output.log("device tokens not loaded: \(error)")
        }
    }
}
