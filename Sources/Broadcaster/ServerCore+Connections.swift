import LiveCore
import Synchronization
import Dispatch
import Reactor
import RunCore
import RunStore
import Wire

extension ServerCore {
    /// Accepts every pending line-protocol connection; past a limit a newcomer gets `err:busy` and is closed.
    func acceptConnections() {
        guard let listener else { return }
        acceptAll(from: listener,
                  refuse: { [unowned self] socket, refusal in
                      connectionStatistics.connectionsRefused += 1
                      var line: [UInt8] = []
                      ErrorEvent(code: .busy, reason: refusal.reason).append(to: &line)
                      _ = line.withUnsafeBytes { try? socket.write($0) }
                  },
                  admit: { [unowned self] socket in admit(socket, now: Self.now()) }, http: false)
    }

    /// True when a newcomer of the kind would be one too many: its kind has its most
    /// (``ServerConfiguration/maximumConnections``, ``ServerConfiguration/maximumHTTPConnections``), or both
    /// kinds together have the most the open-file limit allows (``ServerConfiguration/maximumTotalConnections``).
    func isFull(http: Bool) -> Bool {
        let full = http ? openHTTPConnections >= configuration.maximumHTTPConnections
            : openLineConnections >= configuration.maximumConnections
        guard !full, let total = configuration.maximumTotalConnections else { return full }
        return openLineConnections + openHTTPConnections >= total
    }

    /// Line-protocol connections open on all loops, with those on their way to a loop.
    var openLineConnections: Int {
        guard let router = shard?.router else { return lineConnectionCount }
        return router.lineConnections.load(ordering: .relaxed) + router.postedLineConnections.load(ordering: .relaxed)
    }

    /// HTTP connections open on all loops, with those on their way to a loop.
    var openHTTPConnections: Int {
        guard let router = shard?.router else { return httpConnectionCount }
        return router.httpConnections.load(ordering: .relaxed) + router.postedHTTPConnections.load(ordering: .relaxed)
    }

    /// The accept loop of both listeners: every pending connection is admitted and registered, or, past a
    /// limit (the listener's, or its address's), told so (`refuse`) and closed. Out of descriptors, newcomers
    /// are accepted on the listener's spare one only to be refused, so they hear at once and the listener does
    /// not stay readable; with no spare (it could not be taken back), accepting pauses briefly instead of
    /// spinning.
    /// With several loops, the accepted sockets are dealt to the loops in turn (`http` tells them which kind).
    func acceptAll(from listener: ListeningSocket, refuse: (StreamSocket, Refusal) -> Void,
                   admit: (StreamSocket) -> Peer, http: Bool) {
        while isAccepting {
            let accepted: IOResult<StreamSocket>
            do {
                accepted = try listener.accept()
            } catch where error.isOutOfDescriptors {
                guard refuseOutOfDescriptors(listener, error: error, refuse: refuse) else { return }
                continue
            } catch {
                pauseAccepting(listener, after: error)
                return
            }
            guard case .processed(let socket) = accepted else { return }
            if isFull(http: http) {
                turnAway(socket, .full, refuse: refuse)
                continue
            }
            // Counted here, given back when the connection is closed on whichever loop it ends up (closeNow).
            guard connectionsPerAddress.admit(socket.peerHost) else {
                turnAway(socket, .tooManyFromAddress, refuse: refuse)
                continue
            }
            if !http, let size = configuration.socketReceiveBuffer { try? socket.setReceiveBufferSize(size) }
            if let shard, case let target = shard.router.takeNextLoop(), target != shard.index {
                shard.router.countPosted(http: http, 1)
                shard.router.post([.adopt(MigratingPeer(socket: socket, id: nil, output: OutputBuffer(),
                                                        hasPeerClosed: false, connectedAt: Self.now(),
                                                        kind: .accepted(http: http)))],
                                  events: 0, to: target)
                continue
            }
            let peer = admit(socket)
            do {
                try loop.register(socket.fileDescriptor, interest: .readable, handler: peer)
            } catch {
                logger.write("register failed for \(socket.peerDescription): \(error)")
                closeNow(peer, reason: "register failed")
                continue
            }
            readOnArrival(peer)
        }
    }

    /// Reads a newcomer right away: its first line (or request) has usually come with it, and waiting for
    /// epoll to report it would put the answer behind a whole turn of other connections' work (under a flood a
    /// turn is tens of milliseconds). Nothing there yet costs one read.
    func readOnArrival(_ peer: Peer) {
        guard peer.state == .open else { return }
        peer.handleEvent(readable: true, writable: false, hangup: false)
    }

    /// Reads what the socket has, frames lines and hands each to the hub, within the line budget.
    /// `turnLimit` as for ``processBufferedLines(_:now:turnLimit:)``.
    func read(_ connection: Connection, turnLimit: Int? = nil) {
        loop.assertLoopThread()
        processBufferedLines(connection, now: Self.now(), turnLimit: turnLimit)
        readChunks(connection) { bytes in
            connection.framer.append(bytes)
            processBufferedLines(connection, now: Self.now(), turnLimit: turnLimit)
        }
    }

    /// A few reads per event (so a fire hose cannot keep the loop on one peer), each chunk to `consume`, while
    /// the peer wants to read. At end of stream (the peer shut its sending half, as `printf … | nc` does) what
    /// it asked for is still answered, then it closes.
    func readChunks(_ peer: Peer, _ consume: (UnsafeRawBufferPointer) -> Void) {
        for _ in 0..<4 where peer.wantsToRead {
            let result: IOResult<Int>
            let size = min(readBuffer.count, peer.readAllowance)
            do {
                result = try peer.socket.read(into: UnsafeMutableRawBufferPointer(rebasing: readBuffer[0..<size]))
            } catch {
                closeNow(peer, reason: "read error: \(error)")
                return
            }
            guard case .processed(let count) = result else { return }
            if count == 0 {
                peer.hasPeerClosed = true
                if !peer.owesAnAnswer { closeAfterOutput(peer, reason: "closed by peer") }
                updateInterest(peer)
                return
            }
            consume(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]))
            if count < size { return }
        }
    }

    /// Handles the complete lines the framer holds, until the budget or the connection stops it, at most
    /// ``ServerConfiguration/linesPerTurn`` of them: the rest wait for the connection's next turn.
    /// `turnLimit` is how many lines the loop may have handled this turn before this connection waits for
    /// the next one (less than the whole ``ServerConfiguration/linesPerLoopTurn`` for the queued connections).
    func processBufferedLines(_ connection: Connection, now: Double, turnLimit: Int? = nil) {
        var handled = 0, fixes = 0
        let turnLimit = turnLimit ?? configuration.linesPerLoopTurn
        while connection.state == .open {
            if connection.isAwaitingAnswer {
                updateInterest(connection)  // stop reading until the answer is out
                return
            }
            if handled >= configuration.linesPerTurn {
                queueForNextTurn(connection)
                return
            }
            if linesThisTurn >= turnLimit {
                // The loop's turn is full, not this connection's share: it goes first next turn (a newcomer's
                // `ping:` is not put behind every flood's next share).
                queueForNextTurn(connection, first: true)
                return
            }
            handled += 1
            guard connection.spendLine(now: now) else {
                pauseReading(connection, now: now)
                return
            }
            guard let framed = connection.framer.nextLine() else {
                connection.lineBudget += 1  // nothing was read: give the line back
                return
            }
            linesThisTurn += 1
            switch framed {
            case .tooLong:
                answerError(connection.id, WireError(code: .lineTooLong,
                    reason: "line longer than \(configuration.maximumLineLength) bytes: discarded"))
            case .line(let bytes):
                // Blank lines (spaces and tabs only) are ignored silently: no reply, no flood count.
                if bytes.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { continue }
                do {
                    let command = try Command.parse(bytes)
                    // `iam:` of a runner another loop owns: the connection moves there and goes on there.
                    if case .identify(let name, _) = command, let owner = otherOwner(of: name),
                       !hub.isIdentified(connection.id) {
                        move(connection, to: owner, .line(framer: connection.framer, lineBudget: connection.lineBudget,
                                                          budgetCheckedAt: connection.budgetCheckedAt,
                                                          follows: hub.session(of: connection.id) ?? Session(connectedAt: now),
                                                          command: command))
                        return
                    }
                    guard dispatch(command, on: connection, now: now) else { return }
                    // Only fixes fill the store: a runner waits while it is backlogged, anyone else goes on (a
                    // ping is answered whatever the disk does). Checked every 64 fixes: it takes a lock.
                    if case .location = command {
                        fixes += 1
                        if fixes & 63 == 1 && checkStoreBacklog() {
                            waitForStore(connection)
                            return
                        }
                    }
                } catch {
                    answerError(connection.id, error)
                }
            }
        }
    }

    /// The connection's remaining lines run in its next turn, after every other connection's events (round
    /// robin), or, `first`, before those that had their share in this one; it reads nothing more until then.
    func queueForNextTurn(_ connection: Connection, first: Bool = false) {
        if !connection.hasQueuedWork {
            connection.hasQueuedWork = true
            if first {
                queuedWork.insert(connection, at: queuedFirstCount)
                queuedFirstCount += 1
            } else {
                queuedWork.append(connection)
            }
            updateInterest(connection)
        }
        guard !isQueuedWorkScheduled else { return }
        isQueuedWorkScheduled = true
        let me = unownedOnLoop
        loop.execute { me.value.core.runQueuedWork() }
    }

    /// One more turn for every connection whose lines were left over.
    fileprivate func runQueuedWork() {
        isQueuedWorkScheduled = false
        let work = queuedWork
        queuedWork = []
        queuedFirstCount = 0
        // A quarter of the turn stays for the connections whose bytes this turn's epoll reports.
        let queuedShare = configuration.linesPerLoopTurn - configuration.linesPerLoopTurn / 4
        for (index, connection) in work.enumerated() where connection.hasQueuedWork {
            if linesThisTurn >= queuedShare {
                // The turn is full: the ones not reached go first next turn, before those served now (each
                // went to the back as it was served), so the round robin goes on where it stopped.
                // (After the one this turn stopped in the middle of, which is first already; connections that
                // find the turn full later in it go before these too: they had nothing in it.)
                queuedWork.insert(contentsOf: work[index...].filter { $0.hasQueuedWork }, at: queuedFirstCount)
                if !isQueuedWorkScheduled {
                    isQueuedWorkScheduled = true
                    let me = unownedOnLoop
                    loop.execute { me.value.core.runQueuedWork() }
                }
                return
            }
            connection.hasQueuedWork = false
            guard connection.state == .open else { continue }
            // Its lines, then what its socket has (without a round through epoll): a connection that keeps
            // sending stays in this queue, in turn with the others, rather than jumping it through epoll.
            read(connection, turnLimit: queuedShare)
            updateInterest(connection)
        }
    }

    /// True while the store has more writes waiting than its high-water mark (sticky until the low-water mark).
    /// With several loops, another loop's full inbox counts too: its events come from these fixes; in a
    /// cluster, so does a backlogged bus (Redis slow or away: ``ClusterBus/isBacklogged(adding:)``).
    func checkStoreBacklog() -> Bool {
        guard !isStoreBacklogged else { return true }
        if store.pendingWriteCount > configuration.storeQueueHighWater {
            isStoreBacklogged = true
            logger.write("store backlogged (\(store.pendingWriteCount) writes waiting): reading paused")
        } else if isRelayBacklogged {
            isStoreBacklogged = true
            logger.write("another loop is behind with events: reading fixes paused")
        } else if isClusterBacklogged {
            isStoreBacklogged = true
            logger.write("the cluster bus is behind (Redis slow or away): reading fixes paused")
        }
        return isStoreBacklogged
    }

    /// Parks a connection until the store catches up; its lines stay in its framer and its socket unread.
    private func waitForStore(_ connection: Connection) {
        guard !connection.isWaitingForStore else { return }
        connection.isWaitingForStore = true
        storeWaiters.append(connection)
        updateInterest(connection)
    }

    /// After a commit: once the store is below its low-water mark, the parked connections go on.
    func resumeIfStoreCaughtUp() {
        guard isStoreBacklogged, store.pendingWriteCount <= configuration.storeQueueLowWater, hasRelayCaughtUp,
              !isClusterBacklogged else {
            return
        }
        isStoreBacklogged = false
        logger.write("caught up: reading resumed")
        let waiting = storeWaiters
        storeWaiters.removeAll()
        for connection in waiting {
            connection.isWaitingForStore = false
            guard connection.state == .open else { continue }
            queueForNextTurn(connection)
        }
    }

    /// Stops reading from a connection whose line budget is spent; resumes when it has refilled.
    private func pauseReading(_ connection: Connection, now: Double) {
        guard !connection.isReadPaused else { return }
        connection.isReadPaused = true
        updateInterest(connection)
        let wait = max(0.001, (1 - connection.lineBudget) / configuration.linesPerSecond)
        // By id, not a weak reference (that would give the connection a side table: see `closeAfterOutput`).
        loop.schedule(after: wait) { [id = connection.id, unowned self] in
            guard let connection = connections[id] as? Connection, connection.state == .open else { return }
            connection.isReadPaused = false
            updateInterest(connection)
            processBufferedLines(connection, now: Self.now())
        }
    }
}

extension ServerCore {
    /// Creates the connection for an accepted socket and tells the hub. `movedAs` is the id of a connection
    /// moved from another loop, which keeps it (counted and logged there when it was accepted).
    func admit(_ socket: StreamSocket, now: Double, movedAs: ConnectionID? = nil) -> Connection {
        let id = movedAs ?? takeConnectionID()
        let connection = Connection(id: id, socket: socket, server: self, now: now)
        connections[id] = connection
        lineConnectionCount += 1
        shard?.router.lineConnections.add(1, ordering: .relaxed)
        if movedAs == nil {
            connectionStatistics.connectionsAccepted += 1
            logger.write("connect \(id) \(socket.peerDescription)")
        }
        decide { $0.connected(id, address: Self.address(of: connection), now: now) }
        return connection
    }

    /// Hands a parsed command to the hub, or first to a cluster's claim or takeover; the connection's later
    /// lines wait for what the hub asked to read first (``HubEffect/lookUp(_:then:from:)``). True when the
    /// connection can go on now.
    @discardableResult
    func dispatch(_ command: Command, on connection: Connection, now: Double) -> Bool {
        if identifiesThroughCluster(command, on: connection) { return false }
        decide { $0.received(command, from: connection.id, now: now) }
        return true
    }

    /// What the hub asked to read before it decides a command or a request again (``HubEffect/lookUp(_:then:from:)``).
    func lookUp(_ what: StoreLookUp, then next: AfterLookUp, from id: ConnectionID) {
        switch next {
        case .command(let command):
            guard let connection = connections[id] as? Connection else { return }
            switch what {
            case .runner(let name): lookUpThenHandle(connection, command, name: name)
            case .course(let name): lookUpCourseThenHandle(connection, command, name: name)
            }
        case .request(let route, let request, _):
            lookUpThenDecide(what, route, request, on: id)
        }
    }

    /// A command naming a runner the hub does not know: the store is asked off the loop, then the hub decides
    /// with the answer. The connection's later lines wait meanwhile, as for a history answer; everyone else
    /// goes on (a lookup on the loop stalled every connection of the loop for a round trip to the database).
    private func lookUpThenHandle(_ connection: Connection, _ command: Command, name: String) {
        readThenHandle(connection, command, what: "runner \(name)", { store throws(StoreError) in
            try store.runner(named: name)
        }) { [unowned self] record in decide { $0.learned(record, named: name) } }
    }

    /// `course:NAME` of a course the hub has not read yet: read and built off the loop (a marathon's track is
    /// thousands of points), then the hub answers with it.
    private func lookUpCourseThenHandle(_ connection: Connection, _ command: Command, name: String) {
        let logger = self.logger
        readThenHandle(connection, command, what: "course \(name)", { store throws(StoreError) -> Course? in
            Self.readCourse(name, from: store, logger: logger)
        }) { [unowned self] course in decide { $0.learnedCourse(course, named: name) } }
    }

    /// A command the hub can decide only with something read from the store first: `read` runs off the loop
    /// (refused with `err:busy` when the loop's reads are full), `learn` hands its answer to the hub, then the
    /// command goes to the hub; a failed read answers `err:storage`. The connection waits meanwhile.
    private func readThenHandle<Value: Sendable>(_ connection: Connection, _ command: Command, what: String,
                                                 _ read: @escaping @Sendable (any RunStore) throws(StoreError) -> Value,
                                                 learn: @escaping (Value) -> Void) {
        guard !readsAreFull else { return answerError(connection.id, Self.readsFull) }
        connection.awaitAnswer()
        updateInterest(connection)
        let id = connection.id
        readOffLoop(flushing: false, { store in Result { () throws(StoreError) -> Value in try read(store) } }) {
            [unowned self] found in
            guard connections[id] is Connection else { return }
            switch found {
            case .success(let value):
                learn(value)
                decide { $0.received(command, from: id, now: Self.now()) }
            case .failure(let error):
                logger.write("store read failed for \(what): \(error)")
                answerError(id, WireError(code: .storage, reason: "storage: \(error.message)"))
            }
            answered(id)
        }
    }

    /// A stored course, built (nil: none of that name, or one that no longer builds, which is logged).
    static func readCourse(_ name: String, from store: any RunStore, logger: ServerLog) -> Course? {
        guard let stored = try? store.course(named: name) else { return nil }
        do {
            return try stored.course()
        } catch {
            logger.write("course \(name) in the store does not build: \(error)")
            return nil
        }
    }

    /// Answers a connection's bad line with `err:`; past the flood limit, `err:flood` and close.
    func answerError(_ id: ConnectionID, _ error: WireError) {
        decide { $0.fail(id, error.code, error.reason) }
    }
}
