import Reactor
import Wire

/// One benchmark connection on the driver's epoll loop: a non-blocking socket, a line framer for what
/// arrives and a byte queue for what could not be written yet. Subclasses give the lines meaning.
class LoadPeer: EventHandler {
    /// Where a connection is in its life.
    enum State {
        /// Connected; the opening command has not been answered yet.
        case connecting
        /// The opening command was answered (`ok:iam`, `ok:watch`, `ok:ping`, `stats:`).
        case ready
        /// Gone (closed by either side).
        case closed
    }

    let socket: StreamSocket
    unowned let driver: LoadDriver
    var state = State.connecting
    /// False for a peer that never reads (a stalled reader): it is registered without read interest, so the
    /// server's output piles up; it learns of a close only when the kernel reports an error or a write fails.
    let isReading: Bool
    private var framer = LineFramer(maximumLineLength: 16 * 1024)
    private var output: [UInt8] = []
    private var outputStart = 0
    /// The interest registered now (``LoadDriver/connect(port:_:)`` registers this one).
    private(set) var interest: Interest

    init(socket: StreamSocket, driver: LoadDriver, reading: Bool = true) {
        self.socket = socket
        self.driver = driver
        isReading = reading
        interest = reading ? .readable : []
    }

    /// True while output waits for the socket to take it.
    var hasPendingOutput: Bool { outputStart < output.count }

    func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {
        if writable {
            flush()
            if !hasPendingOutput { socketDrained() }
        }
        guard state != .closed else { return }
        if isReading {
            if readable || hangup { readAvailable() }
        } else if hangup {
            close(reason: "reset by the server")
        }
    }

    /// Queues bytes and writes what the socket takes now.
    final func send(_ bytes: [UInt8]) {
        output.append(contentsOf: bytes)
        flush()
    }

    /// Appends to the output queue without writing; call ``flush()`` after a batch.
    final func withOutput(_ body: (inout [UInt8]) -> Void) {
        body(&output)
    }

    /// Writes queued output until the socket is full; asks for writability only while something is left.
    final func flush() {
        guard state != .closed else { return }
        while outputStart < output.count {
            let result: IOResult<Int>
            do {
                result = try socket.write(output, from: outputStart)
            } catch {
                close(reason: "write: \(error)")
                return
            }
            guard case .processed(let written) = result else { break }
            outputStart += written
        }
        if outputStart == output.count {
            output.removeAll(keepingCapacity: output.capacity <= 1 << 20)
            outputStart = 0
        }
        let base: Interest = isReading ? .readable : []
        setInterest(hasPendingOutput ? base.union(.writable) : base)
    }

    private func setInterest(_ wanted: Interest) {
        guard wanted != interest else { return }
        interest = wanted
        do {
            try driver.loop.setInterest(wanted, for: socket.fileDescriptor)
        } catch {
            close(reason: "epoll: \(error)")
        }
    }

    /// Reads what the socket has (a bounded number of reads per event: the loop is level-triggered) and hands
    /// each complete line to ``received(_:at:)`` with the wall-clock time of the read.
    private func readAvailable() {
        let buffer = driver.readBuffer
        for _ in 0..<8 {
            let result: IOResult<Int>
            do {
                result = try socket.read(into: buffer)
            } catch {
                close(reason: "read: \(error)")
                return
            }
            guard case .processed(let count) = result else { break }
            if count == 0 {
                close(reason: "closed by the server")
                return
            }
            receivedBytes(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), at: LoadClock.wallMicroseconds())
            if state == .closed { return }
            if count < buffer.count { break }
        }
        finishedReading()
    }

    /// What one read brought, at `now` (wall-clock µs). Cut into lines for ``received(_:at:)`` unless a
    /// subclass reads another framing (HTTP answers with a body).
    func receivedBytes(_ bytes: UnsafeRawBufferPointer, at now: Int64) {
        framer.append(bytes)
        while let framed = framer.nextLine() {
            switch framed {
            case .line(let line):
                line.withUnsafeBufferPointer { received($0, at: now) }
            case .tooLong:
                driver.noteProtocolError("a line longer than 16 KiB")
            }
            if state == .closed { return }
        }
    }

    /// Deregisters and closes; a close the driver did not ask for (`expected: false`, e.g. the server hung up
    /// or a write failed) is counted as a failure.
    final func close(reason: String, expected: Bool = false) {
        guard state != .closed else { return }
        state = .closed
        driver.loop.deregister(socket.fileDescriptor)
        socket.close()
        if !expected { closedUnexpectedly(reason) }
    }

    /// The server hung up or a read or write failed. Counted as a failure of the run; a hostile peer, for
    /// which that is an answer, counts it as its own.
    func closedUnexpectedly(_ reason: String) {
        driver.noteUnexpectedClose(reason)
    }

    /// One complete line (without its newline). Subclasses answer their own lines; this handles the common ones.
    func received(_ line: UnsafeBufferPointer<UInt8>, at now: Int64) {
        if line.starts(with: "err:".utf8) {
            driver.noteServerError(String(decoding: line, as: UTF8.self))
        }
    }

    /// After a batch of reads. Runners refill their pipeline here.
    func finishedReading() {}

    /// The socket took everything queued after being full.
    func socketDrained() {}
}

/// A connection that pings once (so the server counts it as active, not a silent newcomer) and then stays idle.
final class LoadIdlePeer: LoadPeer {
    /// Sends `ping:`.
    func start() { send(Array("ping:\n".utf8)) }

    override func received(_ line: UnsafeBufferPointer<UInt8>, at now: Int64) {
        if line.starts(with: "ok:ping".utf8) { state = .ready } else { super.received(line, at: now) }
    }
}

/// The connection that asks the server for its counters at the end.
final class LoadControlPeer: LoadPeer {
    /// The `stats:` answer, once it came.
    private(set) var statistics: StatsEvent?

    /// Sends `stats:`.
    func start() { send(Array("stats:\n".utf8)) }

    override func received(_ line: UnsafeBufferPointer<UInt8>, at now: Int64) {
        guard line.starts(with: "stats:".utf8) else { return super.received(line, at: now) }
        statistics = try? StatsEvent(event: Event.parse(line))
        state = .ready
    }
}

/// A spectator: `watch:NAME` (or, on the web, `GET /events?watch=NAME`), then every `pace` about that runner
/// is timed against its `ts`.
final class LoadSpectator: LoadPeer {
    /// The runner watched.
    let runner: LoadRunner
    /// True for a web spectator (Server-Sent Events on the HTTP port).
    let isWeb: Bool
    /// This spectator's slot in the runner's send log.
    private let slot: Int
    /// `pace` events received.
    private(set) var paceReceived = 0
    /// Run, split, badge and end events received (web spectators count them: none may be lost).
    private(set) var otherEventsReceived = 0
    /// The `event:` line of the event being read (web).
    private var eventKind = ""

    init(socket: StreamSocket, driver: LoadDriver, runner: LoadRunner, web: Bool = false) {
        self.runner = runner
        isWeb = web
        slot = runner.addWatcher()
        super.init(socket: socket, driver: driver)
    }

    /// Sends `watch:NAME`, or the event stream's request.
    func start() {
        send(Array((isWeb ? "GET /events?watch=\(runner.name) HTTP/1.1\r\nHost: load\r\n\r\n" : "watch:\(runner.name)\n").utf8))
    }

    override func received(_ line: UnsafeBufferPointer<UInt8>, at now: Int64) {
        if isWeb { return receivedOnStream(line, at: now) }
        if line.starts(with: "pace:".utf8) {
            paceReceived += 1
            guard let stamp = LoadClock.timestampMicros(in: line) else {
                driver.noteProtocolError("pace without ts")
                return
            }
            // With wall-clock stamps the line itself says when the fix left; with a phone clock the runner's log does.
            let sentAt = driver.fixIntervalMicros == nil ? stamp : runner.sendTime(ofStamp: stamp, watcher: slot)
            driver.notePace(line, sentAt: sentAt, receivedAt: now, sample: paceReceived & 4095 == 1)
        } else if line.starts(with: "ok:watch".utf8) {
            state = .ready
        } else {
            super.received(line, at: now)
        }
    }

    /// One line of the event stream: the response head, then `id:`, `event:` and `data:` lines.
    private func receivedOnStream(_ line: UnsafeBufferPointer<UInt8>, at now: Int64) {
        if line.starts(with: "event: ".utf8) {
            eventKind = String(decoding: line[7...], as: UTF8.self)
        } else if line.starts(with: "data: ".utf8) {
            if eventKind == "pace" {
                paceReceived += 1
                guard let stamp = LoadClock.jsonTimestampMicros(in: line) else {
                    driver.noteProtocolError("pace without ts")
                    return
                }
                let sentAt = driver.fixIntervalMicros == nil ? stamp : runner.sendTime(ofStamp: stamp, watcher: slot)
                driver.notePace(line, sentAt: sentAt, receivedAt: now, sample: false)
            } else if ["run", "split", "badge", "end"].contains(eventKind) {
                otherEventsReceived += 1
            }
        } else if line.starts(with: "HTTP/1.1 200".utf8) {
            state = .ready
        } else if line.starts(with: "HTTP/1.1 ".utf8) {
            driver.noteServerError(String(decoding: line, as: UTF8.self))
        }
    }
}
