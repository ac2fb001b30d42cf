import LiveCore
import ClusterBus
import Foundation
import Reactor
import RunStore
import Wire

/// What a takeover found (``ClusterNode/takeOver(runner:store:)``).
enum TakeoverOutcome: Sendable {
    /// No live run of that runner in the store: `iam:` goes on as usual, with the runner as stored (nil: none).
    case nothingLive(RunnerRecord?)
    /// The run, its runner and its stored fixes: this node holds its lease now.
    case adopt(RunRecord, RunnerRecord, [StoredFix])
    /// Another node still renews the run's lease: it is alive and measures the run.
    case heldElsewhere(node: String)
    /// Redis or the store failed.
    case failed(String)
}

/// What a cluster claim found: the name is this connection's now, or it was taken (as the store has it).
enum ClaimOutcome: Sendable {
    case claimed
    case taken(RunnerRecord?)
}

extension ClusterNode {
    /// Off the loops: the runner's live run in the shared store, and its lease, waiting (up to the lease's
    /// length and a second) for a dead node's lease to run out.
    func takeOver(runner: String, store: any RunStore) -> TakeoverOutcome {
        let name = Self.leaseName(of: runner)
        do {
            guard let record = try store.liveRuns().filter({ $0.runner == runner }).max(by: { $0.id < $1.id }) else {
                return .nothingLive(try store.runner(named: runner))
            }
            let deadline = Date().addingTimeInterval(settings.leaseSeconds + 1)
            while try !lease.take(name, ttl: settings.leaseSeconds) {
                guard let holder = try lease.holder(of: name) else { continue }  // ran out just now: take it
                if holder.node == settings.node { break }
                guard Date() < deadline else { return .heldElsewhere(node: holder.node) }
                Thread.sleep(forTimeInterval: min(0.25, max(0.01, holder.remaining)))
            }
            guard let runnerRecord = try store.runner(named: runner) else {
                _ = try? lease.release(name)
                return .nothingLive(nil)
            }
            // The run may have ended while the lease was waited for (a lease is given up only once the end is
            // committed): then there is nothing to resume.
            guard try store.liveRuns().contains(where: { $0.id == record.id }) else {
                _ = try? lease.release(name)
                return .nothingLive(runnerRecord)
            }
            return .adopt(record, runnerRecord, try store.fixesInTimeOrder(ofRun: record.id))
        } catch {
            return .failed("\(error)")
        }
    }
}

/// A node of a cluster: relays onto the bus, the bus's messages in, and runs taken over from dead nodes.
extension ServerCore {
    /// A relay this loop made, for the bus (sent at the end of the turn). A run that starts here is leased;
    /// one that ends here gives its lease up.
    func queueForCluster(_ message: HubNews) {
        guard let cluster else { return }
        clusterOutbox.append(message)
        // A catch-up or snapshot of a run (its start and end again) leases nothing and gives no lease up.
        if case .event(let event) = message, !event.isCatchUp {
            switch event.kind {
            case .started: cluster.ownRun(of: event.runner, log: logger)
            case .ended: cluster.releaseRun(of: event.runner, log: logger)
            default: break
            }
        }
    }

    /// What `stats:` adds in a cluster: the bus's events out, in, and refused by a full publish queue, and the
    /// stream entries they were packed into and read from (what the bus costs Redis and this node).
    func clusterCounters() -> [(String, Int)] {
        guard let cluster else { return [] }
        let bus = cluster.bus.statistics
        return [("bus_published", bus.published), ("bus_received", bus.received),
                ("bus_dropped", bus.droppedFull + cluster.dropped.load(ordering: .relaxed)),
                ("bus_entries_written", bus.publishedEntries), ("bus_entries_read", bus.receivedEntries)]
    }

    /// True while the cluster bus holds more events for Redis than it should, counting this turn's, which go at
    /// its end (this loop then reads no fixes, until the bus says it drained: ``ClusterNode``).
    var isClusterBacklogged: Bool {
        cluster?.bus.isBacklogged(adding: clusterOutbox.count) ?? false
    }

    /// End of a turn: this turn's relays onto the bus.
    func sendToCluster() {
        guard let cluster else { return }
        // Which runners this loop's connections follow, when that changed: the node reads their partitions.
        if hub.followGeneration != clusterFollowGeneration {
            clusterFollowGeneration = hub.followGeneration
            cluster.follow(hub.followedRunners, onLoop: shard?.index ?? 0)
        }
        if !clusterOutbox.isEmpty {
            // Handed over whole, as the loops' relays are (an in-place empty would copy the shared buffer).
            let batch = clusterOutbox
            clusterOutbox = []
            cluster.publish(batch)
        }
        // Paused for the bus by this turn's events, which the queue then took without passing its high-water mark
        // (it drained meanwhile): no drained notice will come, so look again now.
        if isStoreBacklogged { resumeIfStoreCaughtUp() }
    }

    /// Some of `runner`'s events were dropped on their way to the bus: the other nodes get its run as it stands.
    func resendToCluster(_ runner: String) {
        loop.assertLoopThread()
        decide { $0.resendToOtherNodes(runner, now: Self.now()) }
    }

    /// Another node's messages, on this loop: handled as another loop's.
    func receiveFromCluster(_ messages: [HubNews]) {
        loop.assertLoopThread()
        let now = Self.now()
        for news in messages { decide { $0.hear(news, now: now) } }
    }

    /// In a cluster, `iam:` goes off the loop first (a claim in the shared store, or a look for a run a dead
    /// node left); true when it did, the connection then waiting for the answer. On the loop that owns the
    /// runner: where the line was read, or where the connection moved to with it.
    func identifiesThroughCluster(_ command: Command, on connection: Connection) -> Bool {
        if needsTakeoverCheck(command, on: connection) {
            takeOverThenIdentify(connection, command)
            return true
        }
        if needsClusterClaim(command, on: connection) {
            claimThenIdentify(connection, command)
            return true
        }
        return false
    }

    /// True when `iam:` with a key must first look for the runner's run on another node: in a cluster, for a
    /// runner with no run here.
    func needsTakeoverCheck(_ command: Command, on connection: Connection) -> Bool {
        cluster != nil && hub.resumesRunNotHere(command, from: connection.id)
    }

    /// `iam:NAME KEY` in a cluster, for a runner with no run here: off the loop, the store and the lease say
    /// whether its run lives on (a node that died); if so it is rebuilt here first, then `iam:` resumes it.
    /// The connection's later lines wait meanwhile.
    func takeOverThenIdentify(_ connection: Connection, _ command: Command) {
        guard case .identify(let name, _) = command else { return }
        let store = self.store, id = connection.id
        askCluster(connection) { cluster in cluster.takeOver(runner: name, store: store) } then: { server, outcome in
            server.finishTakeover(outcome, of: name, for: id, then: command)
        }
    }

    /// Runs `ask` on the cluster's takeover thread (it blocks on the store and Redis), the connection's later
    /// lines waiting, then `answer` on the loop.
    private func askCluster<Answer: Sendable>(_ connection: Connection,
                                              _ ask: @escaping @Sendable (ClusterNode) -> Answer,
                                              then answer: @escaping (ServerCore, Answer) -> Void) {
        guard let cluster else { return }
        connection.awaitAnswer()
        updateInterest(connection)
        let server = LoopBound(self, loop: loop), answer = LoopBound(answer, loop: loop)
        cluster.takeovers.async { [loop] in
            let answered = ask(cluster)
            loop.execute { answer.value(server.value, answered) }
        }
    }

    private func finishTakeover(_ outcome: TakeoverOutcome, of name: String, for id: ConnectionID, then command: Command) {
        guard let connection = connections[id] as? Connection else { return }
        let now = Self.now()
        var goOn = true
        switch outcome {
        case .nothingLive(let runner):
            // Known here now, so `iam:` does not look it up in the store on the loop.
            if let runner { decide { $0.know(runner) } }
        case .adopt(let record, let runner, let fixes):
            // A run that started here meanwhile (another connection) is not replaced.
            if !hub.hasRunHere(name) {
                decide { $0.takeOver(record, runner: runner, fixes: fixes, now: now) }
                cluster?.adoptedRun(of: name)
            }
        case .heldElsewhere(let node):
            goOn = false
            answerError(id, WireError(code: .liveElsewhere, reason: "the run of \(name) is live on node \(node): connect there"))
        case .failed(let reason):
            goOn = false
            logger.write("cluster: takeover of \(name) failed: \(reason)")
            answerError(id, WireError(code: .storage, reason: "cannot look for the run of \(name): try again"))
        }
        if goOn { decide { $0.received(command, from: id, now: now) } }
        goOnAfterClusterAnswer(connection, now: now)
    }

    /// True for `iam:NAME` (no key) in a cluster, of a name this node does not know: the claim goes to the
    /// shared store first, so two nodes never give the same name out.
    func needsClusterClaim(_ command: Command, on connection: Connection) -> Bool {
        cluster != nil && hub.claimsUnknownName(command, from: connection.id)
    }

    /// `iam:NAME` in a cluster: the name is claimed with one unique insert in the shared store (off the loop);
    /// the winner gets its key, anyone later `err:wrong_key` as for any claimed name.
    func claimThenIdentify(_ connection: Connection, _ command: Command) {
        guard case .identify(let name, _) = command else { return }
        let store = self.store, id = connection.id, key = RunnerKey.generate(), now = Self.now()
        askCluster(connection) { _ in
            // Taken already: the record comes along, so `iam:` does not look it up in the store on the loop.
            Result { () throws(StoreError) -> ClaimOutcome in
                try store.claimRunner(name: name, keyHash: RunnerKey.hash(key), created: now)
                    ? .claimed : .taken(try store.runner(named: name))
            }
        } then: { server, claimed in
            server.finishClaim(claimed, of: name, key: key, for: id, then: command)
        }
    }

    private func finishClaim(_ claimed: Result<ClaimOutcome, StoreError>, of name: String, key: String,
                             for id: ConnectionID, then command: Command) {
        guard let connection = connections[id] as? Connection else { return }
        let now = Self.now()
        switch claimed {
        case .success(.claimed) where !hub.isKnownHere(name) && !hub.isIdentified(id):
            decide { $0.claimed(id, name: name, key: key) }
        case .success(let outcome):
            // Another node (or connection) was first: asked again, the name wants its key.
            let record: RunnerRecord? = if case .taken(let record?) = outcome { record } else { nil }
            decide { $0.nameTaken(name, record: record) }
            decide { $0.received(command, from: id, now: now) }
        case .failure(let error):
            logger.write("cluster: claim of \(name) failed: \(error)")
            answerError(id, WireError(code: .storage, reason: "storage: \(error.message)"))
        }
        goOnAfterClusterAnswer(connection, now: now)
    }

    /// A run left without a node whose runner never came back (``ClusterNode``'s sweep took its lease): ended
    /// here, saved as timed out. Nothing if its runner came back here meanwhile.
    func endAbandoned(_ record: RunRecord, runner: RunnerRecord, fixes: [StoredFix]) {
        guard !hub.hasRunHere(runner.name) else { return }
        decide { $0.endAbandoned(record, runner: runner, fixes: fixes, now: Self.now()) }
    }

    /// The connection's lines that waited for a cluster answer run now, in order.
    private func goOnAfterClusterAnswer(_ connection: Connection, now: Double) {
        guard connection.answerArrived() else { return }
        processBufferedLines(connection, now: now)
        if connection.hasPeerClosed { closeAfterOutput(connection, reason: "closed by peer") }
        updateInterest(connection)
    }
}
