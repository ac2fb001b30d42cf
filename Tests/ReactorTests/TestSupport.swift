import Glibc
import Reactor
import Testing

/// A mutable cell shared by a test and its loop thread. Written on the loop thread (or before the
/// loop starts) and read by the test after the loop thread has finished, which orders the accesses.
final class Box<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// A loop running on its own thread with a safety timer, so no test can hang.
struct RunningLoop {
    let thread: EventLoopThread
    let timedOut: Box<Bool>

    /// Waits for `run()` to return; true if the loop stopped by itself (not via the safety timer).
    func finished() async -> Bool {
        await thread.waitUntilFinished()
        return !timedOut.value
    }
}

/// Starts `loop` on a new thread; after `timeout` seconds the loop is stopped and counts as failed.
/// Must be called before the loop runs (it schedules the safety timer from the configuring thread).
func startLoop(_ loop: EventLoop, timeout: Double = 20) throws -> RunningLoop {
    let timedOut = Box(false)
    loop.schedule(after: timeout) { [unowned loop] in
        timedOut.value = true
        loop.stop()
    }
    return RunningLoop(thread: try EventLoopThread(loop: loop), timedOut: timedOut)
}

/// Waits (bounded) until `fd` has one of `events` (`POLLIN`/`POLLOUT`); true if it did.
func wait(for events: Int32, on fd: Int32, milliseconds: Int32 = 5_000) -> Bool {
    var descriptor = pollfd(fd: fd, events: Int16(events), revents: 0)
    return poll(&descriptor, 1, milliseconds) == 1
}

/// A connected pair over loopback: a blocking client and the accepted (non-blocking) server side.
func connectedPair(_ listener: ListeningSocket) throws -> (client: StreamSocket, server: StreamSocket) {
    let client = try StreamSocket.connect(host: "127.0.0.1", port: listener.port)
    guard wait(for: POLLIN, on: listener.fileDescriptor) else { throw IOError(operation: "test accept", errno: ETIMEDOUT) }
    guard case .processed(let server) = try listener.accept() else {
        throw IOError(operation: "test accept", errno: EAGAIN)
    }
    return (client, server)
}

/// Writes all of `bytes`, waiting for writability when the socket is non-blocking and full.
func writeAll(_ socket: StreamSocket, _ bytes: [UInt8]) throws {
    var offset = 0
    while offset < bytes.count {
        let result = try bytes.withUnsafeBytes { buffer in try socket.write(UnsafeRawBufferPointer(rebasing: buffer[offset...])) }
        switch result {
        case .processed(let count): offset += count
        case .wouldBlock: _ = wait(for: POLLOUT, on: socket.fileDescriptor)
        }
    }
}

/// Reads what is available now (non-blocking socket): the bytes, and whether EOF was seen.
func readAvailable(_ socket: StreamSocket) throws -> (bytes: [UInt8], eof: Bool) {
    var collected: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let result = try buffer.withUnsafeMutableBytes { try socket.read(into: $0) }
        switch result {
        case .wouldBlock: return (collected, false)
        case .processed(0): return (collected, true)
        case .processed(let count): collected += buffer[..<count]
        }
    }
}

/// Accepts every pending connection and serves it with an ``EchoConnection``.
final class Acceptor: EventHandler {
    let listener: ListeningSocket
    unowned let loop: EventLoop
    private(set) var accepted = 0

    init(listener: ListeningSocket, loop: EventLoop) {
        self.listener = listener
        self.loop = loop
    }

    func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {
        while true {
            guard case .processed(let socket)? = try? listener.accept() else { return }
            accepted += 1
            let connection = EchoConnection(socket: socket, loop: loop)
            do {
                try loop.register(socket.fileDescriptor, interest: .readable, handler: connection)
            } catch {
                socket.close()
            }
        }
    }
}

/// Echoes everything it reads; closes on EOF, error or hang-up.
final class EchoConnection: EventHandler {
    let socket: StreamSocket
    unowned let loop: EventLoop

    init(socket: StreamSocket, loop: EventLoop) {
        self.socket = socket
        self.loop = loop
    }

    func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {
        do {
            let (bytes, eof) = try readAvailable(socket)
            if !bytes.isEmpty { try writeAll(socket, bytes) }
            if eof || (hangup && !readable) { close() }
        } catch {
            close()
        }
    }

    private func close() {
        loop.deregister(socket.fileDescriptor)
        socket.close()
    }
}

/// A non-blocking client registered with the loop: sends `message`, collects the echo, reports.
final class PingClient: EventHandler {
    let socket: StreamSocket
    unowned let loop: EventLoop
    let message: [UInt8]
    private(set) var received: [UInt8] = []
    private let onEcho: (PingClient) -> Void

    init(socket: StreamSocket, loop: EventLoop, message: [UInt8], onEcho: @escaping (PingClient) -> Void) {
        self.socket = socket
        self.loop = loop
        self.message = message
        self.onEcho = onEcho
    }

    /// Sends the message and starts listening for the reply (loop thread, or before the loop runs).
    func start() throws {
        try socket.setBlocking(false)
        try writeAll(socket, message)
        try loop.register(socket.fileDescriptor, interest: .readable, handler: self)
    }

    func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {
        let (bytes, eof) = (try? readAvailable(socket)) ?? ([], true)
        received += bytes
        if received.count >= message.count || eof {
            loop.deregister(socket.fileDescriptor)
            onEcho(self)
        }
    }
}

/// Counts its events and runs a closure for each.
final class Recorder: EventHandler {
    private(set) var calls = 0
    var onEvent: (Recorder) -> Void

    init(onEvent: @escaping (Recorder) -> Void = { _ in }) {
        self.onEvent = onEvent
    }

    func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {
        calls += 1
        onEvent(self)
    }
}
