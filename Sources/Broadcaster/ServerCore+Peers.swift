import LiveCore
import Dispatch
import Reactor
import RunStore
import Wire

/// Writing to, asking epoll for, and closing any peer: the line protocol's connections and HTTP's alike.
extension ServerCore {
    /// Writes what one peer has pending, up to the per-turn cap, in one gathered write (its queued lines are
    /// references to the broadcast's one copy); arms writability only if some is left.
    func flush(_ peer: Peer) {
        loop.assertLoopThread()
        guard peer.state != .closed else { return }
        var failed: IOError?
        _ = peer.output.drain(limit: configuration.writeBytesPerTurn,
                              highWaterMark: configuration.outputHighWaterMark) { vectors in
            do throws(IOError) {
                guard case .processed(let written) = try peer.socket.write(vectors: vectors) else { return nil }
                return written
            } catch {
                failed = error
                return nil
            }
        }
        if let failed {
            closeNow(peer, reason: "write error: \(failed)")
            return
        }
        if peer.output.isEmpty && peer.state == .closing {
            closeNow(peer, reason: peer.closeReason ?? "closed")
            return
        }
        if peer.output.isEmpty {
            peer.backloggedSince = nil
        } else if peer.backloggedSince == nil {
            peer.backloggedSince = Self.now()
        }
        let dropped = peer.output.takeDroppedCheers(highWaterMark: configuration.outputHighWaterMark)
        if dropped > 0, peer.state == .open {
            // Caught up: it hears how many cheers it went without (written with its next write).
            let line = Hub.line(DroppedEvent(what: "msg", count: dropped))
            _ = peer.deliver(line, shared: SharedLine.copying(line), as: .reply, sequence: nil)
        }
        updateInterest(peer)
    }

    /// Marks a peer to be closed at the end of the turn (the hub may be iterating its audiences now).
    func closeAtTurnEnd(_ peer: Peer, reason: String) {
        guard !peer.isDoomed, peer.state != .closed else { return }
        peer.isDoomed = true
        doomed.append((peer, reason))
    }

    /// End of a loop turn: the doomed peers are closed, then every peer that got output is written to once.
    func flushPending() {
        loop.assertLoopThread()
        let reaped = doomed
        doomed.removeAll(keepingCapacity: true)
        for (peer, reason) in reaped { closeNow(peer, reason: reason) }
        let batch = pendingFlush
        pendingFlush.removeAll(keepingCapacity: true)
        for peer in batch {
            peer.isQueuedForFlush = false
            flush(peer)
        }
    }

    /// Marks a peer for the end-of-turn flush.
    func scheduleFlush(_ peer: Peer) {
        if !peer.isQueuedForFlush {
            peer.isQueuedForFlush = true
            pendingFlush.append(peer)
        }
    }

    /// Asks epoll for what the peer needs now: reading when it wants to read, writing if output waits.
    func updateInterest(_ peer: Peer) {
        guard peer.state != .closed else { return }
        var wanted: Interest = []
        if peer.wantsToRead { wanted.insert(.readable) }
        if !peer.output.isEmpty { wanted.insert(.writable) }
        guard wanted != peer.interest else { return }
        peer.interest = wanted
        do {
            try loop.setInterest(wanted, for: peer.socket.fileDescriptor)
        } catch {
            closeNow(peer, reason: "epoll: \(error)")
        }
    }

    /// Closes a peer at once, dropping pending output, and tells the hub.
    func closeNow(_ peer: Peer, reason: String) {
        guard peer.state != .closed else { return }
        peer.state = .closed
        loop.deregister(peer.socket.fileDescriptor)
        let description = peer.socket.peerDescription
        peer.socket.close()
        // Here, not in didClose: a peer moved to another loop leaves this one without closing its socket.
        connectionsPerAddress.release(peer.socket.peerHost)
        connections[peer.id] = nil
        peer.didClose()
        decide { $0.disconnected(peer.id, now: Self.now()) }
        logger.write("disconnect \(peer.id) \(description): \(reason)")
    }

    /// Closes a peer once what is queued for it is written (at once when nothing is).
    func closeAfterOutput(_ peer: Peer, reason: String) {
        guard peer.state == .open else { return }
        peer.state = .closing
        peer.closeReason = reason
        if peer.output.isEmpty {
            closeNow(peer, reason: reason)
        } else {
            updateInterest(peer)
            // A reader that never reads must not keep a closing peer forever. By id, not a weak reference: one
            // would give the peer a side table, and slow every later retain and release of it.
            loop.schedule(after: 5) { [id = peer.id, unowned self] in
                if let peer = connections[id] { closeNow(peer, reason: reason + " (output not drained)") }
            }
        }
    }

    /// Takes a new id for an accepted socket.
    func takeConnectionID() -> ConnectionID {
        defer { nextConnection += 1 }
        // The loops of a group number apart, so an id names one connection in the whole server's log.
        guard let shard else { return ConnectionID(nextConnection) }
        return ConnectionID((nextConnection - 1) * shard.router.count + shard.index + 1)
    }
}

extension ServerCore {
    func send(_ line: [UInt8], to id: ConnectionID, as role: LineRole) {
        loop.assertLoopThread()
        guard let peer = connections[id], peer.state != .closed, !peer.isDoomed else { return }
        // One copy per broadcast, shared by every recipient (the hub hands each the same array).
        if peer.deliver(line, shared: sharedLines.share(line), as: role, sequence: currentBroadcast?.sequence) {
            connectionStatistics.eventsConflated += 1
        }
        if peer.output.pendingBytes > configuration.outputHardLimit {
            // A runner's own connection, with a run going, is not closed for what others send it: it goes once it
            // stops reading altogether (``closeStalledRunners(now:)``), or at four times the limit.
            if peer.output.pendingBytes <= 4 * configuration.outputHardLimit, hub.isRunnersOwnConnection(id) {
                watchStalledRunner(peer)
                scheduleFlush(peer)
                return
            }
            connectionStatistics.slowClientsClosed += 1
            logger.write("slow client \(id): \(peer.output.pendingBytes) bytes pending, closing")
            closeAtTurnEnd(peer, reason: "too slow")
            return
        }
        scheduleFlush(peer)
    }

    func close(_ id: ConnectionID, reason: String) {
        guard let peer = connections[id], peer.state == .open, !peer.isDoomed else { return }
        // Asked by the hub: with nothing left to write the peer is closed at the end of the turn, so the hub is
        // never re-entered (`disconnected`) from inside one of its own decisions.
        if peer.output.isEmpty {
            closeAtTurnEnd(peer, reason: reason)
        } else {
            closeAfterOutput(peer, reason: reason)
        }
    }

    func errorSent(to id: ConnectionID) {
        guard let connection = connections[id] as? Connection, connection.state == .open else { return }
        if connection.countError(now: Self.now()) {
            decide { $0.counted(errors: 1) }
            var line: [UInt8] = []
            ErrorEvent(code: .flood, reason: "more than \(configuration.errorsPerSecond) errors in a second: closing")
                .append(to: &line)
            send(line, to: id, as: .reply)
            close(id, reason: "error flood")
        }
    }

    func answerFromStore(to id: ConnectionID,
                         _ read: @escaping @Sendable (any RunStore) throws(StoreError) -> [[UInt8]]) {
        guard !readsAreFull else { return answerError(id, Self.readsFull) }
        (connections[id] as? Connection)?.awaitAnswer()
        let logger = self.logger
        readOffLoop({ store in
            do throws(StoreError) {
                return try read(store)
            } catch {
                logger.write("store read failed: \(error)")
                return [Hub.line(ErrorEvent(code: .storage, reason: "storage: \(error.message)"))]
            }
        }) { [unowned self] lines in
            for line in lines { send(line, to: id, as: .reply) }
            decide { $0.counted(events: lines.count) }
            answered(id)
        }
    }

    func sendOnceStored(_ lines: [[UInt8]], to id: ConnectionID, as role: LineRole) {
        (connections[id] as? Connection)?.awaitAnswer()
        afterCommit { [unowned self] failure in
            if let failure {
                send(Hub.line(ErrorEvent(code: .storage, reason: "storage: \(failure.message)")), to: id, as: .reply)
            } else {
                for line in lines { send(line, to: id, as: role) }
            }
            decide { $0.counted(events: failure == nil ? lines.count : 1) }
            answered(id)
        }
    }

    /// Calls `deliver` on the loop once everything submitted so far is committed (through failures and their
    /// retries: it may wait as long as the storage is down), with an error only if the store closed first.
    func afterCommit(_ deliver: @escaping (StoreError?) -> Void) {
        let store = self.store
        let delivery = LoopBound(deliver, loop: loop)
        commitQueue.async { [loop] in
            let failure: StoreError?
            do throws(StoreError) {
                try store.flushCommitted()
                failure = nil
            } catch {
                failure = error
            }
            loop.execute { delivery.value(failure) }
        }
    }

    /// An answer made off the loop is queued: the commands that waited behind it run now, in order.
    func answered(_ id: ConnectionID) {
        guard let connection = connections[id] as? Connection, connection.answerArrived() else { return }
        processBufferedLines(connection, now: Self.now())
        if connection.hasPeerClosed { closeAfterOutput(connection, reason: "closed by peer") }
        updateInterest(connection)
    }

    func loadReplay(for id: ConnectionID,
                    _ read: @escaping @Sendable (any RunStore) throws(StoreError) -> Result<ReplaySource, WireError>,
                    then deliver: @escaping (Result<ReplaySource, WireError>) -> Void) {
        (connections[id] as? Connection)?.awaitAnswer()
        readOffLoop({ store in
            do throws(StoreError) { return try read(store) } catch { return .failure(WireError(.storage, "storage: \(error.message)")) }
        }) { [unowned self] result in
            deliver(result)
            answered(id)
        }
    }

    func readReplayFixes(_ read: @escaping @Sendable (any RunStore) throws(StoreError) -> ReplayPage,
                         then deliver: @escaping (Result<ReplayPage, StoreError>) -> Void) {
        readOffLoop(flushing: false, { store in
            do throws(StoreError) { return .success(try read(store)) } catch { return .failure(error) }
        }, then: deliver)
    }

    func scheduleReplays(at time: Double?) {
        if let timer = replayTimer { loop.cancel(timer) }
        replayTimer = nil
        guard let time else { return }
        replayTimer = loop.schedule(after: max(0, time - Self.now())) { [unowned self] in
            replayTimer = nil
            decide { $0.advanceReplays(now: Self.now()) }
        }
    }

    /// Runs a store read on the history queue (after a flush when `flushing`, so it sees every earlier write),
    /// then hands its result to `deliver` on the loop.
    func readOffLoop<Value: Sendable>(flushing: Bool = true, _ read: @escaping @Sendable (any RunStore) -> Value,
                                      then deliver: @escaping (Value) -> Void) {
        let store = self.store
        let delivery = LoopBound({ [unowned self] (value: Value) in
            queuedReads -= 1
            deliver(value)
        }, loop: loop)
        queuedReads += 1
        queryQueue.async { [loop] in
            if flushing { store.flush() }
            let value = read(store)
            loop.execute { delivery.value(value) }
        }
    }

    /// True when as many reads are queued as a loop may have (``ServerConfiguration/maximumQueuedReads``):
    /// new history reads are refused until some are answered.
    var readsAreFull: Bool { queuedReads >= configuration.maximumQueuedReads }

    /// The answer to a history command while the reads are full.
    static let readsFull = WireError(code: .busy, reason: "too many history reads waiting: try again shortly")

}
