#if !canImport(Darwin)
import Foundation
import Locking
import Reactor
import Synchronization

/// The TCP socket behind one `SocketInputStream`/`SocketOutputStream` pair (Linux, where Foundation has no
/// socket streams): connects when the first stream opens, watches readiness on the client I/O loop and turns
/// it into `StreamDelegate` events.
///
/// Incoming bytes are read off the socket on the loop into an inbox, so a stream read never blocks and
/// `hasBytesAvailable` is exact. Delegate events are always delivered asynchronously on the I/O thread, never
/// from inside `open`, `read`, `write` or `close`, so a delegate may call back into the streams freely.
final class SocketConnection: EventHandler, Sendable {
    /// Where the connection is in its life.
    enum Phase {
        /// No stream opened yet.
        case idle
        /// `connect` is queued on the loop.
        case connecting
        /// Connected and registered with the loop.
        case open
        /// Connecting, reading or writing failed; the socket is closed.
        case failed(any Error)
        /// The peer closed its side (end of stream).
        case ended
        /// Both streams were closed.
        case closed
    }

    /// Mutable state, shared by the loop thread and callers of the streams.
    struct State {
        var phase = Phase.idle
        var socket: StreamSocket?
        /// Bytes read from the socket that the input stream has not taken yet; `inbox[inboxHead...]`.
        var inbox: [UInt8] = []
        var inboxHead = 0
        /// The send buffer refused bytes; a `hasSpaceAvailable` follows when it drains.
        var waitingForSpace = false
        /// Reading paused because the inbox is full (the reader is not keeping up).
        var readingPaused = false
        /// `endEncountered` was delivered (or is due once the inbox drains).
        var endDelivered = false
        var inputOpened = false, inputClosed = false
        var outputOpened = false, outputClosed = false

        var buffered: Int { inbox.count - inboxHead }
    }

    /// The host to connect to: a name (resolved off the I/O thread) or a numeric IPv4 or IPv6 address.
    let host: String
    /// The TCP port.
    let port: UInt16
    /// Seconds for resolving and connecting, shared out over the host's addresses.
    let connectTimeout: Double
    private let io: ClientIOThread
    private let state = Mutex(State())
    /// The streams, held weakly: they own the connection.
    private let streams = Locked(Streams())

    /// What ``streams`` guards (set once by `attach`, read on the I/O thread).
    private struct Streams {
        weak var input: SocketInputStream?
        weak var output: SocketOutputStream?
    }

    /// Above this many unread bytes the socket is no longer read until the input stream drains the inbox.
    static let inboxLimit = 1 << 20
    /// Bytes read per system call.
    static let readChunk = 64 * 1024

    init(host: String, port: UInt16, connectTimeout: Double, io: ClientIOThread) {
        self.host = host
        self.port = port
        self.connectTimeout = connectTimeout
        self.io = io
    }

    /// Connects the two streams to this connection.
    func attach(input: SocketInputStream, output: SocketOutputStream) {
        streams.withLock { $0 = Streams(input: input, output: output) }
    }

    /// Reads the state.
    func withState<T>(_ body: (inout State) -> T) -> T {
        state.withLock { body(&$0) }
    }

    // MARK: Called by the streams (any thread)

    /// A stream was opened: connect on the first, report `openCompleted` to each.
    func open(input isInput: Bool) {
        let start: Bool = state.withLock { state in
            if isInput { state.inputOpened = true } else { state.outputOpened = true }
            guard case .idle = state.phase else { return false }
            state.phase = .connecting
            return true
        }
        io.execute { [self] in
            if start { connect() } else { reportCurrentPhase(toInput: isInput) }
        }
    }

    /// A stream was closed; the socket closes with the second one (or with the only opened one).
    func close(input isInput: Bool) {
        let socket: StreamSocket? = state.withLock { state in
            if isInput { state.inputClosed = true } else { state.outputClosed = true }
            let inputDone = state.inputClosed || !state.inputOpened
            let outputDone = state.outputClosed || !state.outputOpened
            guard inputDone && outputDone else { return nil }
            if case .failed = state.phase {} else { state.phase = .closed }
            defer { state.socket = nil }
            return state.socket
        }
        guard let socket else { return }
        io.execute { [io] in
            io.loop.deregister(socket.fileDescriptor)
            socket.close()
        }
    }

    /// Takes up to `count` buffered bytes: the count, 0 with nothing buffered (see `SocketInputStream.read`).
    func read(into buffer: UnsafeMutablePointer<UInt8>, maxLength count: Int) -> Int {
        let (taken, resume, endNow) = state.withLock { state -> (Int, Bool, Bool) in
            let taken = min(count, state.buffered)
            guard taken > 0 else { return (0, false, false) }
            state.inbox.withUnsafeBufferPointer { inbox in
                buffer.update(from: inbox.baseAddress! + state.inboxHead, count: taken)
            }
            state.inboxHead += taken
            if state.inboxHead == state.inbox.count {
                state.inbox.removeAll(keepingCapacity: true)
                state.inboxHead = 0
            }
            let resume = state.readingPaused && state.buffered < Self.inboxLimit / 2
            if resume { state.readingPaused = false }
            var endNow = false
            if case .ended = state.phase, state.buffered == 0, !state.endDelivered {
                state.endDelivered = true
                endNow = true
            }
            return (taken, resume, endNow)
        }
        if resume { io.execute { [self] in updateInterest() } }
        if endNow { io.execute { [self] in deliverToInput(.endEncountered) } }
        return taken
    }

    /// Writes what the kernel takes now: the count, 0 when the send buffer is full, -1 on failure.
    func write(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int {
        guard let socket = state.withLock({ $0.socket }) else { return -1 }
        do {
            switch try socket.write(UnsafeRawBufferPointer(start: bytes, count: count)) {
            case .processed(let written):
                return written
            case .wouldBlock:
                state.withLock { $0.waitingForSpace = true }
                io.execute { [self] in updateInterest() }
                return 0
            }
        } catch {
            io.execute { [self] in fail(error) }
            state.withLock { if case .open = $0.phase { $0.phase = .failed(error) } }
            return -1
        }
    }

    // MARK: Loop thread

    /// Resolves the host and connects off the shared I/O thread (a name lookup or a connect to an unreachable
    /// host can take seconds, and every client in the process shares that thread), trying each of the host's
    /// addresses in turn, then registers the socket back on it.
    ///
    /// On a thread of its own rather than a Dispatch global queue: that pool runs as many blocking items as
    /// there are cores, so an app (or test) blocking a few of them would hold every connection attempt back.
    /// Attempts are rare (one per connection, then backoff), so a thread each costs nothing that matters.
    private func connect() {
        let host = self.host, port = self.port, timeout = connectTimeout
        let thread = Thread { [self] in
            let result: Result<StreamSocket, IOError>
            do throws(IOError) {
                result = .success(try StreamSocket.connect(resolving: host, port: port, timeout: timeout))
            } catch {
                result = .failure(error)
            }
            io.execute { [self] in finishConnecting(result) }
        }
        thread.name = "moonrunner-connect"
        thread.start()
    }

    private func finishConnecting(_ result: Result<StreamSocket, IOError>) {
        do {
            let socket = try result.get()
            try socket.setBlocking(false)
            try io.loop.register(socket.fileDescriptor, interest: .readable, handler: self)
            let stillWanted = state.withLock { state -> Bool in
                guard case .connecting = state.phase else { return false }
                state.phase = .open
                state.socket = socket
                return true
            }
            guard stillWanted else {
                io.loop.deregister(socket.fileDescriptor)
                socket.close()
                return
            }
        } catch {
            state.withLock { if case .connecting = $0.phase { $0.phase = .failed(error) } }
        }
        reportCurrentPhase(toInput: true)
        reportCurrentPhase(toInput: false)
    }

    /// Tells a newly opened stream where things stand: open (and room to write), failed, or ended.
    private func reportCurrentPhase(toInput isInput: Bool) {
        let (phase, opened) = state.withLock { ($0.phase, isInput ? $0.inputOpened : $0.outputOpened) }
        guard opened else { return }
        switch phase {
        case .open, .ended:
            if isInput {
                deliverToInput(.openCompleted)
                if withState({ $0.buffered > 0 }) { deliverToInput(.hasBytesAvailable) }
            } else {
                deliverToOutput(.openCompleted)
                deliverToOutput(.hasSpaceAvailable)
            }
        case .failed:
            if isInput { deliverToInput(.errorOccurred) } else { deliverToOutput(.errorOccurred) }
        case .idle, .connecting, .closed:
            break
        }
    }

    /// Readiness from the loop.
    func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {
        if readable || hangup { readAvailable() }
        if writable {
            state.withLock { $0.waitingForSpace = false }
            updateInterest()
            deliverToOutput(.hasSpaceAvailable)
        }
    }

    /// Drains the socket into the inbox (bounded), then reports bytes and end of stream.
    private func readAvailable() {
        guard let socket = state.withLock({ $0.socket }) else { return }
        var received = 0
        var ended = false
        var chunk = [UInt8](repeating: 0, count: Self.readChunk)
        reading: while withState({ $0.buffered }) < Self.inboxLimit {
            let result: IOResult<Int>
            do {
                result = try chunk.withUnsafeMutableBytes { try socket.read(into: $0) }
            } catch {
                if received > 0 { deliverToInput(.hasBytesAvailable) }
                fail(error)
                return
            }
            switch result {
            case .wouldBlock:
                break reading
            case .processed(0):
                ended = true
                break reading
            case .processed(let count):
                received += count
                state.withLock { $0.inbox.append(contentsOf: chunk[..<count]) }
            }
        }
        if ended {
            io.loop.deregister(socket.fileDescriptor)
            state.withLock { state in
                if case .open = state.phase { state.phase = .ended }
            }
        } else if withState({ $0.buffered >= Self.inboxLimit }) {
            state.withLock { $0.readingPaused = true }
            updateInterest()
        }
        if received > 0 { deliverToInput(.hasBytesAvailable) }
        if ended {
            let endNow = state.withLock { state -> Bool in
                guard state.buffered == 0, !state.endDelivered else { return false }
                state.endDelivered = true
                return true
            }
            if endNow { deliverToInput(.endEncountered) }
        }
    }

    /// Sets the loop interest from the state: readable unless paused or ended, writable while waiting.
    private func updateInterest() {
        let (socket, interest) = state.withLock { state -> (StreamSocket?, Interest) in
            guard case .open = state.phase else { return (nil, []) }
            var interest: Interest = []
            if !state.readingPaused { interest.insert(.readable) }
            if state.waitingForSpace { interest.insert(.writable) }
            return (state.socket, interest)
        }
        guard let socket else { return }
        try? io.loop.setInterest(interest, for: socket.fileDescriptor)
    }

    /// Records the failure, closes the socket and reports `errorOccurred` to both streams.
    private func fail(_ error: any Error) {
        let socket: StreamSocket? = state.withLock { state in
            switch state.phase {
            case .open, .connecting, .failed: state.phase = .failed(error)
            case .idle, .ended, .closed: break
            }
            defer { state.socket = nil }
            return state.socket
        }
        if let socket {
            io.loop.deregister(socket.fileDescriptor)
            socket.close()
        }
        deliverToInput(.errorOccurred)
        deliverToOutput(.errorOccurred)
    }

    private func deliverToInput(_ event: Stream.Event) {
        guard let input = streams.withLock({ $0.input }), state.withLock({ $0.inputOpened && !$0.inputClosed }) else { return }
        input.delegate?.stream(input, handle: event)
    }

    private func deliverToOutput(_ event: Stream.Event) {
        guard let output = streams.withLock({ $0.output }), state.withLock({ $0.outputOpened && !$0.outputClosed }) else {
            return
        }
        output.delegate?.stream(output, handle: event)
    }
}
#endif
