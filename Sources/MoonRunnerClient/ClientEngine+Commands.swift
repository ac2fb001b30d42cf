import Wire

/// What the public API asks of the engine (I/O thread).
extension ClientEngine {
    /// Fails `completion` if the client can no longer do anything.
    private func refuseIfFinal(_ completion: RequestCompletion) -> Bool {
        switch phase {
        case .closed: completion(.failure(.closed)); return true
        case .failed(let error): completion(.failure(error)); return true
        default: return false
        }
    }

    /// Becomes runner `name` (with `key` to prove a claimed name).
    func join(name: String, key: String?, completion: @escaping RequestCompletion) {
        guard !refuseIfFinal(completion) else { return }
        if identified && hasStreams && self.name == name {
            completion(.success([]))  // already this runner on this connection
            return
        }
        self.name = name
        self.key = key ?? (self.name == name ? self.key : nil)
        if hasStreams {
            send(.identify(name: name, key: self.key), completions: [completion])
        } else {
            joinWaiters.append(completion)
            connectIfIdle()
        }
    }

    /// Keeps a fix until acked and sends it now if the connection is identified.
    func enqueue(_ fix: LocationCommand) {
        unacked.append(fix)  // `send` counted it already, for callers (see `recordAcknowledged`)
        if identified && hasStreams { write(.location(fix)) } else { connectIfIdle() }
    }

    /// Ends the run once every earlier fix is sent.
    func requestStop(save: Bool, completion: @escaping RequestCompletion) {
        guard !refuseIfFinal(completion) else { return }
        stopRequest = (save, (stopRequest?.waiters ?? []) + [completion])
        sendStopIfRequested()
        connectIfIdle()
    }

    /// `watch:` or `coach:`, remembered for reconnects.
    func subscribe(_ command: Command) {
        guard !phase.isFinal else { return }
        // A new token or interval replaces the old one: one watch and one coach subscription per target.
        switch command {
        case .coach(let target, _, _):
            subscriptions.removeAll { if case .coach(target, _, _) = $0 { true } else { false } }
        case .watch(let target, _):
            subscriptions.removeAll { if case .watch(target, _) = $0 { true } else { false } }
        default:
            break
        }
        if !subscriptions.contains(command) { subscriptions.append(command) }
        if hasStreams { send(command) } else { connectIfIdle() }
    }

    /// `unwatch:` — forgets the watch and coach subscriptions to the target.
    func unsubscribe(_ target: WatchTarget) {
        guard !phase.isFinal else { return }
        subscriptions.removeAll { command in
            switch command {
            case .watch(target, _), .coach(target, _, _): return true
            default: return false
            }
        }
        if hasStreams { send(.unwatch(target)) }
    }

    /// A command with an answer: sent now, or on the next connection.
    func request(_ command: Command, completion: @escaping RequestCompletion) {
        guard !refuseIfFinal(completion) else { return }
        if hasStreams {
            send(command, completions: [completion])
        } else {
            retries.append(PendingRequest(command, completions: [completion]))
            connectIfIdle()
        }
    }
}
