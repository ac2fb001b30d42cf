import Foundation
import Reactor
import Wire
#if canImport(Glibc)
import Glibc
#endif

/// A one-connection-at-a-time TCP server a test drives by hand: it accepts, reads the client's lines and writes
/// exactly the bytes the test chooses (split anywhere), or closes — to test a client's framing and reconnects.
public final class FakeServer: @unchecked Sendable {
    /// The listener (port 0: the kernel picks).
    public let listener: ListeningSocket
    /// The port to connect to.
    public var port: UInt16 { listener.port }

    /// Listens on 127.0.0.1.
    public init() throws {
        listener = try ListeningSocket(host: "127.0.0.1", port: 0)
    }

    /// Waits for the next connection.
    public func accept(timeout: Double = 5) throws -> FakePeer {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if case .processed(let socket) = try listener.accept() { return FakePeer(socket: socket) }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw TestClient.Timeout(waitingFor: "a connection", seen: []) }
            var descriptor = pollfd(fd: listener.fileDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, Int32(max(1, left * 1000)))
        }
    }

    /// Stops listening.
    public func close() { listener.close() }
}

/// The server side of one accepted connection.
public final class FakePeer: @unchecked Sendable {
    /// The accepted (non-blocking) socket.
    public let socket: StreamSocket
    private var framer = LineFramer(maximumLineLength: 1 << 20)
    private var lines: [String] = []

    init(socket: StreamSocket) {
        self.socket = socket
    }

    /// The client's next line, waiting up to `timeout` seconds.
    public func nextLine(timeout: Double = 5) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while lines.isEmpty {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw TestClient.Timeout(waitingFor: "a client line", seen: []) }
            try wait(for: Int16(POLLIN), timeout: left)
            var buffer = [UInt8](repeating: 0, count: 65536)
            guard case .processed(let count) = try buffer.withUnsafeMutableBytes({ try socket.read(into: $0) }) else {
                continue
            }
            if count == 0 { throw TestClient.EndOfStream(seen: []) }
            framer.append(buffer[..<count])
            while let framed = framer.nextLine() {
                if case .line(let bytes) = framed { lines.append(String(decoding: bytes, as: UTF8.self)) }
            }
        }
        return lines.removeFirst()
    }

    /// The client's next `count` lines.
    public func nextLines(_ count: Int, timeout: Double = 5) throws -> [String] {
        try (0..<count).map { _ in try nextLine(timeout: timeout) }
    }

    /// Writes all of `bytes` in one go (as far as the kernel allows).
    public func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let result = try bytes.withUnsafeBytes { try socket.write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            if case .processed(let written) = result { offset += written } else { try wait(for: Int16(POLLOUT), timeout: 5) }
        }
    }

    /// Writes lines, each with `\n`, in one write.
    public func send(_ lines: [String]) throws {
        try write(Array(lines.map { $0 + "\n" }.joined().utf8))
    }

    /// Closes the connection.
    public func close() { socket.close() }

    private func wait(for events: Int16, timeout: Double) throws {
        var descriptor = pollfd(fd: socket.fileDescriptor, events: events, revents: 0)
        if poll(&descriptor, 1, Int32(max(1, timeout * 1000))) == 0 {
            throw TestClient.Timeout(waitingFor: "socket readiness", seen: [])
        }
    }
}

/// Async forms for async tests: the blocking waits run on threads of their own, so they never hold one of the few
/// Swift concurrency threads the client's own tasks (and other tests) need meanwhile.
extension FakeServer {
    /// `accept(timeout:)` off the concurrency pool.
    public func accepted(timeout: Double = 30) async throws -> FakePeer {
        try await offPool { try self.accept(timeout: timeout) }
    }
}

extension FakePeer {
    /// `nextLine(timeout:)` off the concurrency pool.
    public func line(timeout: Double = 10) async throws -> String {
        try await offPool { try self.nextLine(timeout: timeout) }
    }

    /// `nextLines(_:timeout:)` off the concurrency pool.
    public func lines(_ count: Int, timeout: Double = 10) async throws -> [String] {
        try await offPool { try self.nextLines(count, timeout: timeout) }
    }
}

/// Runs blocking work on a thread of its own and awaits it.
///
/// Not on `DispatchQueue.global()`: on Linux its pool is as wide as the machine has cores (2 here), so two tests
/// waiting 30 s for a child process stalled every other test's waits behind them (CI saw the suite stand still).
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await onItsOwnThread(work)
}

/// Runs a test's blocking body (sockets, polls, child processes, a browser) on a thread of its own, so it never
/// holds one of the few threads of the concurrency pool that other tests' tasks need to make progress.
public func onItsOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// `ChildProcess.awaitExit(timeout:)` off the concurrency pool.
public func exitStatus(_ child: ChildProcess, timeout: Double = 30) async -> Int32 {
    (try? await offPool { child.awaitExit(timeout: timeout) }) ?? -1
}
