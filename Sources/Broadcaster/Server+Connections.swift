import Dispatch
import Reactor
import RunStore
import Wire

extension Server {
    /// Accepts every pending connection; past the limit a newcomer gets `err:busy` and is closed.
    func acceptConnections() {
        while isAccepting {
            let accepted: IOResult<StreamSocket>
            do {
                accepted = try listener.accept()
            } catch {
                // EMFILE and friends: the listener stays readable, so pause accepting briefly instead of spinning.
                logger.write("accept failed: \(error); pausing accepts for 100 ms")
                try? loop.setInterest([], for: listener.fileDescriptor)
                loop.schedule(after: 0.1) { [unowned self] in
                    if isAccepting { try? loop.setInterest(.readable, for: listener.fileDescriptor) }
                }
                return
            }
            guard case .processed(let socket) = accepted else { return }
            let now = Self.now()
            if connections.count >= configuration.maximumConnections {
                hub.statistics.connectionsRefused += 1
                var line: [UInt8] = []
                ErrorEvent(code: .busy, reason: "server full: try again later").append(to: &line)
                _ = line.withUnsafeBytes { try? socket.write($0) }
                socket.close()
                continue
            }
            let connection = admit(socket, now: now)
            do {
                try loop.register(socket.fileDescriptor, interest: .readable, handler: connection)
            } catch {
                logger.write("register failed for \(socket.peerDescription): \(error)")
                closeNow(connection, reason: "register failed")
            }
        }
    }

    /// Reads what the socket has, frames lines and hands each to the hub, within the line budget.
    func read(_ connection: Connection) {
        var now = Self.now()
        processBufferedLines(connection, now: now)
        // A few reads per event, so a fire hose cannot keep the loop on one connection.
        for _ in 0..<4 where connection.state == .open && !connection.isReadPaused && !connection.isAwaitingAnswer {
            let result: IOResult<Int>
            do {
                result = try connection.socket.read(into: readBuffer)
            } catch {
                closeNow(connection, reason: "read error: \(error)")
                return
            }
            guard case .processed(let count) = result else { return }
            if count == 0 {
                closeNow(connection, reason: "closed by peer")
                return
            }
            connection.framer.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]))
            now = Self.now()
            processBufferedLines(connection, now: now)
            if count < readBuffer.count { return }
        }
    }

    /// Handles the complete lines the framer holds, until the budget or the connection stops it.
    func processBufferedLines(_ connection: Connection, now: Double) {
        while connection.state == .open {
            if connection.isAwaitingAnswer {
                updateInterest(connection)  // stop reading until the answer is out
                return
            }
            guard connection.spendLine(now: now) else {
                pauseReading(connection, now: now)
                return
            }
            guard let framed = connection.framer.nextLine() else {
                connection.lineBudget += 1  // nothing was read: give the line back
                return
            }
            switch framed {
            case .tooLong:
                answerError(connection.id, WireError(code: .lineTooLong,
                    reason: "line longer than \(configuration.maximumLineLength) bytes: discarded"))
            case .line(let bytes):
                if bytes.isEmpty { continue }
                do {
                    let command = try Command.parse(bytes)
                    hub.received(command, from: connection.id, now: now)
                } catch {
                    answerError(connection.id, error)
                }
            }
        }
    }

    /// Stops reading from a connection whose line budget is spent; resumes when it has refilled.
    private func pauseReading(_ connection: Connection, now: Double) {
        guard !connection.isReadPaused else { return }
        connection.isReadPaused = true
        updateInterest(connection)
        let wait = max(0.001, (1 - connection.lineBudget) / configuration.linesPerSecond)
        loop.schedule(after: wait) { [weak connection, unowned self] in
            guard let connection, connection.state == .open else { return }
            connection.isReadPaused = false
            updateInterest(connection)
            processBufferedLines(connection, now: Self.now())
        }
    }

    /// Writes what one connection has pending, up to the per-turn cap; arms writability only if some is left.
    func flush(_ connection: Connection) {
        guard connection.state != .closed else { return }
        var failed: IOError?
        _ = connection.output.drain(limit: configuration.writeBytesPerTurn,
                                    highWaterMark: configuration.outputHighWaterMark) { bytes in
            do throws(IOError) {
                guard case .processed(let written) = try connection.socket.write(bytes) else { return nil }
                return written
            } catch {
                failed = error
                return nil
            }
        }
        if let failed {
            closeNow(connection, reason: "write error: \(failed)")
            return
        }
        if connection.output.isEmpty && connection.state == .closing {
            closeNow(connection, reason: connection.closeReason ?? "closed")
            return
        }
        updateInterest(connection)
    }

    /// End of a loop turn: every connection that got output this turn is written to once.
    func flushPending() {
        let batch = pendingFlush
        pendingFlush.removeAll(keepingCapacity: true)
        for connection in batch {
            connection.isQueuedForFlush = false
            flush(connection)
        }
    }

    /// Asks epoll for what the connection needs now: reading unless paused or closing, writing if output waits.
    func updateInterest(_ connection: Connection) {
        guard connection.state != .closed else { return }
        var wanted: Interest = []
        if connection.state == .open && !connection.isReadPaused && !connection.isAwaitingAnswer {
            wanted.insert(.readable)
        }
        if !connection.output.isEmpty { wanted.insert(.writable) }
        guard wanted != connection.interest else { return }
        connection.interest = wanted
        do {
            try loop.setInterest(wanted, for: connection.socket.fileDescriptor)
        } catch {
            closeNow(connection, reason: "epoll: \(error)")
        }
    }

    /// Closes a connection at once, dropping pending output, and tells the hub.
    func closeNow(_ connection: Connection, reason: String) {
        guard connection.state != .closed else { return }
        connection.state = .closed
        loop.deregister(connection.socket.fileDescriptor)
        let peer = connection.socket.peerDescription
        connection.socket.close()
        connections[connection.id] = nil
        hub.disconnected(connection.id, now: Self.now())
        logger.write("disconnect \(connection.id) \(peer): \(reason)")
    }
}

extension Server {
    /// Creates the connection for an accepted socket and tells the hub.
    func admit(_ socket: StreamSocket, now: Double) -> Connection {
        let id = ConnectionID(nextConnection)
        nextConnection += 1
        let connection = Connection(id: id, socket: socket, server: self, now: now)
        connections[id] = connection
        hub.statistics.connectionsAccepted += 1
        hub.connected(id, now: now)
        logger.write("connect \(id) \(socket.peerDescription)")
        return connection
    }

    /// Answers a connection's bad line with `err:`; past the flood limit, `err:flood` and close.
    func answerError(_ id: ConnectionID, _ error: WireError) {
        hub.fail(id, error.code, error.reason)
    }
}

extension Server: HubOutput {
    func send(_ line: [UInt8], to id: ConnectionID, paceOf runner: String?) {
        guard let connection = connections[id], connection.state != .closed else { return }
        if connection.output.append(line, paceOf: runner, highWaterMark: configuration.outputHighWaterMark) {
            hub.statistics.eventsConflated += 1
        }
        if connection.output.pendingBytes > configuration.outputHardLimit {
            hub.statistics.slowClientsClosed += 1
            logger.write("slow client \(id): \(connection.output.pendingBytes) bytes pending, closing")
            closeNow(connection, reason: "too slow")
            return
        }
        if !connection.isQueuedForFlush {
            connection.isQueuedForFlush = true
            pendingFlush.append(connection)
        }
    }

    func close(_ id: ConnectionID, reason: String) {
        guard let connection = connections[id], connection.state == .open else { return }
        connection.state = .closing
        connection.closeReason = reason
        if connection.output.isEmpty {
            closeNow(connection, reason: reason)
        } else {
            updateInterest(connection)
            // A peer that never reads must not keep a closing connection forever.
            loop.schedule(after: 5) { [weak connection, unowned self] in
                if let connection { closeNow(connection, reason: reason + " (output not drained)") }
            }
        }
    }

    func errorSent(to id: ConnectionID) {
        guard let connection = connections[id], connection.state == .open else { return }
        if connection.countError(now: Self.now()) {
            hub.statistics.errorsSent += 1
            var line: [UInt8] = []
            ErrorEvent(code: .flood, reason: "more than \(configuration.errorsPerSecond) errors in a second: closing")
                .append(to: &line)
            send(line, to: id, paceOf: nil)
            close(id, reason: "error flood")
        }
    }

    func answerFromStore(to id: ConnectionID,
                         _ read: @escaping @Sendable (any RunStore) throws(StoreError) -> [[UInt8]]) {
        connections[id]?.isAwaitingAnswer = true
        let store = self.store
        let logger = self.logger
        queryQueue.async { [loop] in
            store.flush()
            let lines: [[UInt8]]
            do throws(StoreError) {
                lines = try read(store)
            } catch {
                logger.write("store read failed: \(error)")
                lines = [Hub.line(ErrorEvent(code: .storage, reason: "storage: \(error.message)"))]
            }
            loop.execute { [weak self] in
                guard let self else { return }
                for line in lines { self.send(line, to: id, paceOf: nil) }
                self.hub.statistics.eventsSent += lines.count
                // The answer is queued: the commands that waited behind it run now, in order.
                guard let connection = self.connections[id], connection.isAwaitingAnswer else { return }
                connection.isAwaitingAnswer = false
                self.processBufferedLines(connection, now: Self.now())
                self.updateInterest(connection)
            }
        }
    }

    func log(_ message: String) {
        logger.write(message)
    }
}
