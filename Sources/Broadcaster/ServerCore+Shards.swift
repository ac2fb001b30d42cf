import LiveCore
import Reactor
import RunStore
import Wire

/// A `stats:` or `/metrics` answer waiting for the other loops' counters.
struct PendingCounters {
    var counters: [(String, Int)]
    var waiting: Int
    let finish: ([(String, Int)]) -> Void
}

/// Where one loop of a ``ServerGroup`` stands: the router shared by the loops, its index, and the ports the
/// first loop listens on (the others report them).
struct ShardPlacement: Sendable {
    let router: ShardRouter
    let index: Int
    let port: UInt16
    let httpPort: UInt16?
}

/// The loops of a ``ServerGroup`` talking to each other: relayed events out at the end of each turn, in from
/// the inbox; connections handed to the loop that owns their runner.
extension ServerCore {
    /// Init: wires the hub to the other loops (shared event numbers, ownership, their counters).
    func joinShards(_ shard: ShardPlacement) {
        let router = shard.router
        relayOutbox = Array(repeating: [], count: router.count)
        relayOutboxEvents = Array(repeating: 0, count: router.count)
        hub.share(sequence: { router.nextSequence() }, owns: { router.owner(of: $0) == shard.index },
                  cheerLimits: router.cheerLimits)
    }

    /// The loop that owns a runner when it is another one than this; nil when it is this one (or one loop).
    func otherOwner(of runner: String) -> Int? {
        guard let shard else { return nil }
        let owner = shard.router.owner(of: runner)
        return owner == shard.index ? nil : owner
    }

    /// Queues the hub's news for every other loop and node (sent at the end of the turn).
    func queueRelay(_ news: HubNews) {
        queueForCluster(news)
        // A snapshot is for the other nodes, which missed events; this node's loops missed nothing.
        if case .event(let event) = news, event.isSnapshot { return }
        guard let shard else { return }
        let isEvent: Bool
        if case .event = news { isEvent = true } else { isEvent = false }
        for index in 0..<shard.router.count where index != shard.index {
            relayOutbox[index].append(.news(news))
            if isEvent { relayOutboxEvents[index] += 1 }
        }
    }

    /// End of a turn: each other loop gets what this turn relayed to it, in one message (one wake-up).
    func sendRelays() {
        guard let shard else { return }
        for index in relayOutbox.indices where !relayOutbox[index].isEmpty {
            // The batch itself goes (not a copy): emptying it in place while the other loop still holds it would
            // allocate a new buffer of the largest batch's capacity every turn and keep it for good.
            let batch = relayOutbox[index]
            relayOutbox[index] = []
            shard.router.post(batch, events: relayOutboxEvents[index], to: index)
            relayOutboxEvents[index] = 0
        }
    }

    /// Another loop's batch, on this loop. Once the inbox drains below its low-water mark, the loops that
    /// stopped reading fixes because of it are told to go on.
    func receiveRelayed(_ messages: [RelayMessage], events: Int) {
        loop.assertLoopThread()
        guard let shard else { return }
        let now = Self.now()
        for message in messages {
            switch message {
            case .news(let news): decide { $0.hear(news, now: now) }
            case .inboxDrained: resumeIfStoreCaughtUp()
            case .adopt(let peer): adopt(peer, now: now)
            case .countersWanted(let request, let from):
                shard.router.post([.counters(request: request, statisticsCounters() + loopGauges())], events: 0,
                                  to: from)
            case .counters(let request, let counters): addCounters(counters, to: request)
            }
        }
        guard events > 0 else { return }
        let left = shard.router.drained(events, at: shard.index)
        let low = shard.router.inboxLowWater
        if left <= low && left + events > low {
            for index in 0..<shard.router.count where index != shard.index {
                shard.router.post([.inboxDrained], events: 0, to: index)
            }
        }
    }

    /// True while another loop's inbox is over its high-water mark (this loop then reads no fixes).
    var isRelayBacklogged: Bool {
        guard let shard else { return false }
        return shard.router.deepestInbox(except: shard.index) > shard.router.inboxHighWater
    }

    /// True once every other loop's inbox is at or below its low-water mark.
    var hasRelayCaughtUp: Bool {
        guard let shard else { return true }
        return shard.router.deepestInbox(except: shard.index) <= shard.router.inboxLowWater
    }

    /// `stats:` on this loop: the other loops are asked for their counters; the connection's later commands
    /// wait (as for a history answer) until the sum is answered.
    func answerStatistics(to id: ConnectionID, local: [(String, Int)]) {
        guard let connection = connections[id] as? Connection else { return }
        let subject = cluster?.settings.node ?? StatsEvent.serverSubject
        guard let shard, shard.router.count > 1 else {
            return decide { $0.send(StatsEvent(local + clusterCounters(), subject: subject), to: id) }
        }
        connection.awaitAnswer()
        gatherCounters(local) { [unowned self] counters in
            decide { $0.send(StatsEvent(counters + clusterCounters(), subject: subject), to: id) }
            guard let connection = connections[id] as? Connection, connection.answerArrived() else { return }
            processBufferedLines(connection, now: Self.now())
            if connection.hasPeerClosed { closeAfterOutput(connection, reason: "closed by peer") }
            updateInterest(connection)
        }
    }

    /// What a loop counts beyond `stats:` for `/metrics`: its HTTP connections and event streams.
    func loopGauges() -> [(String, Int)] {
        let streams = connections.values.reduce(0) { $0 + (($1 as? HTTPConnection)?.stream != nil ? 1 : 0) }
        return [("http_connections", httpConnectionCount), ("event_streams", streams)]
    }

    /// Asks every other loop for its counters and hands `finish` the sums of the keys in `local` (at once
    /// with one loop).
    func gatherCounters(_ local: [(String, Int)], then finish: @escaping ([(String, Int)]) -> Void) {
        guard let shard, shard.router.count > 1 else { return finish(local) }
        let request = nextCountersRequest
        nextCountersRequest += 1
        pendingCounters[request] = PendingCounters(counters: local, waiting: shard.router.count - 1, finish: finish)
        for index in 0..<shard.router.count where index != shard.index {
            shard.router.post([.countersWanted(request: request, from: shard.index)], events: 0, to: index)
        }
    }

    private func addCounters(_ counters: [(String, Int)], to request: Int) {
        guard var pending = pendingCounters[request] else { return }
        Hub.add(counters, to: &pending.counters)
        pending.waiting -= 1
        guard pending.waiting == 0 else {
            pendingCounters[request] = pending
            return
        }
        pendingCounters[request] = nil
        pending.finish(pending.counters)
    }

    // MARK: Moving connections

    /// Hands a connection to the loop `owner` (it named a runner that loop owns): this loop forgets it without
    /// closing its socket, and `kind` carries what the new loop needs to go on where this one stopped.
    func move(_ peer: Peer, to owner: Int, _ kind: MigratingPeer.Kind) {
        guard let shard else { return }
        let connectedAt = hub.connectedAt(peer.id) ?? Self.now()
        peer.state = .closed  // timers and turn lists holding it skip it from now on
        loop.deregister(peer.socket.fileDescriptor)
        connections[peer.id] = nil
        peer.didClose()
        decide { $0.disconnected(peer.id, now: Self.now()) }
        logger.write("move \(peer.id) \(peer.socket.peerDescription) to loop \(owner)")
        shard.router.post([.adopt(MigratingPeer(socket: peer.socket, id: peer.id, output: peer.output,
                                                hasPeerClosed: peer.hasPeerClosed, connectedAt: connectedAt,
                                                kind: kind))], events: 0, to: owner)
    }

    /// A connection from another loop (or a socket the first loop accepted for this one): registered here,
    /// then the command or request that brought it is handled, then whatever it sent after.
    private func adopt(_ moving: MigratingPeer, now: Double) {
        let peer: Peer
        switch moving.kind {
        case .accepted(let http):
            shard?.router.countPosted(http: http, -1)
            peer = http ? admitHTTP(moving.socket, now: now) : admit(moving.socket, now: now)
        case .line(let framer, let budget, let checkedAt, let follows, _):
            let connection = admit(moving.socket, now: moving.connectedAt, movedAs: moving.id)
            connection.framer = framer
            connection.lineBudget = budget
            connection.budgetCheckedAt = checkedAt
            decide { $0.restore(follows, for: connection.id) }
            peer = connection
        case .http(let parser, let idleSince, _):
            let connection = admitHTTP(moving.socket, now: now, movedAs: moving.id)
            connection.parser = parser
            connection.idleSince = idleSince
            peer = connection
        }
        peer.output = moving.output
        peer.hasPeerClosed = moving.hasPeerClosed
        do {
            try loop.register(moving.socket.fileDescriptor, interest: .readable, handler: peer)
        } catch {
            logger.write("register failed for \(moving.socket.peerDescription): \(error)")
            closeNow(peer, reason: "register failed")
            return
        }
        switch moving.kind {
        case .accepted:
            readOnArrival(peer)
            return
        case .line(_, _, _, _, let command):
            guard let connection = peer as? Connection else { return }
            // As if read here: a name or course it needs is read off the loop first (never on it).
            dispatch(command, on: connection, now: now)
            processBufferedLines(connection, now: now)
        case .http(_, _, let request):
            guard let connection = peer as? HTTPConnection else { return }
            respond(to: request, on: connection, now: now)
            answerRequests(connection, now: now)
        }
        if !peer.output.isEmpty { scheduleFlush(peer) }
        if peer.hasPeerClosed && !peer.owesAnAnswer { closeAfterOutput(peer, reason: "closed by peer") }
        updateInterest(peer)
    }
}
