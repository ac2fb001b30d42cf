import Broadcaster
import Foundation
import Reactor
import RunStore
import Wire
#if canImport(Glibc)
import Glibc
#endif

/// A line-at-a-time TCP client for tests: send commands, await events with a deadline (never a sleep).
public final class TestClient {
    public let socket: StreamSocket
    private var framer = LineFramer(maximumLineLength: 1 << 20)
    /// Every line received so far, in order.
    public private(set) var received: [String] = []
    private var readIndex = 0

    public struct Timeout: Error, CustomStringConvertible {
        let waitingFor: String
        let seen: [String]
        public var description: String { "timed out waiting for \(waitingFor); saw \(seen.suffix(10))" }
    }

    public init(port: UInt16) throws {
        socket = try StreamSocket.connect(host: "127.0.0.1", port: port)
    }

    /// Sends one line (a newline is added).
    public func send(_ line: String) throws {
        try write(Array((line + "\n").utf8))
    }

    /// Sends raw bytes as they are.
    public func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let result = try bytes.withUnsafeBytes { all in
                try socket.write(UnsafeRawBufferPointer(rebasing: all[offset...]))
            }
            if case .processed(let count) = result { offset += count } else { try awaitReady(events: Int16(POLLOUT), 5) }
        }
    }

    /// The next line not yet returned, waiting up to `timeout` seconds.
    public func nextLine(timeout: Double = 5) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while readIndex == received.count {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw Timeout(waitingFor: "a line", seen: received) }
            guard try fill(timeout: left) else { throw EndOfStream(seen: received) }
        }
        defer { readIndex += 1 }
        return received[readIndex]
    }

    /// Lines until (and including) the first that satisfies `predicate`.
    @discardableResult
    public func lines(until description: String, timeout: Double = 5, _ predicate: (String) -> Bool) throws -> [String] {
        var collected: [String] = []
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw Timeout(waitingFor: description, seen: received) }
            let line = try nextLine(timeout: left)
            collected.append(line)
            if predicate(line) { return collected }
        }
    }

    /// The first line (skipping others) that starts with `prefix`.
    @discardableResult
    public func expect(_ prefix: String, timeout: Double = 5) throws -> String {
        try lines(until: prefix, timeout: timeout) { $0.hasPrefix(prefix) }.last!
    }

    /// The next line, which must start with `prefix`.
    @discardableResult
    public func expectNext(_ prefix: String, timeout: Double = 5) throws -> String {
        let line = try nextLine(timeout: timeout)
        guard line.hasPrefix(prefix) else { throw Unexpected(expected: prefix, got: line) }
        return line
    }

    /// Sends `line` and returns the answer, which must be the next line and start with `prefix`.
    @discardableResult
    public func ask(_ line: String, expecting prefix: String, timeout: Double = 5) throws -> String {
        try send(line)
        return try expectNext(prefix, timeout: timeout)
    }

    /// Waits until the server closes the connection; returns the lines that came first.
    public func awaitClose(timeout: Double = 5) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw Timeout(waitingFor: "close", seen: received) }
            if try !fill(timeout: left) { return Array(received[readIndex...]) }
        }
    }

    public struct EndOfStream: Error { public let seen: [String] }
    public struct Unexpected: Error {
        public let expected: String
        public let got: String
        public init(expected: String, got: String) {
            self.expected = expected
            self.got = got
        }
    }

    /// Reads once; false at end of stream.
    private func fill(timeout: Double) throws -> Bool {
        try awaitReady(events: Int16(POLLIN), timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        let result = try buffer.withUnsafeMutableBytes { try socket.read(into: $0) }
        guard case .processed(let count) = result else { return true }
        if count == 0 { return false }
        framer.append(buffer[0..<count])
        while let framed = framer.nextLine() {
            if case .line(let bytes) = framed { received.append(String(decoding: bytes, as: UTF8.self)) }
        }
        return true
    }

    private func awaitReady(events: Int16, _ timeout: Double) throws {
        var descriptor = pollfd(fd: socket.fileDescriptor, events: events, revents: 0)
        let ready = poll(&descriptor, 1, Int32(max(1, timeout * 1000)))
        if ready == 0 { throw Timeout(waitingFor: "readiness", seen: received) }
    }

    public func close() { socket.close() }
}

/// A server on an ephemeral port with an in-memory store, shut down when the body ends.
public func withServer<T>(_ configure: (inout ServerConfiguration) -> Void = { _ in },
                   store: (any RunStore)? = nil,
                   _ body: (Server) throws -> T) throws -> T {
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.httpPort = 0
    configure(&configuration)
    // MOONRUNNER_TEST_LOOPS=N runs every such test against N event loops (the first one is handed over).
    if let loops = ProcessInfo.processInfo.environment["MOONRUNNER_TEST_LOOPS"].flatMap(Int.init), loops > 1 {
        let group = try ServerGroup(configuration: configuration, store: store ?? MemoryRunStore(), loops: loops,
                                    log: ServerLog(isEnabled: false))
        try group.start()
        defer { group.shutdown() }
        return try body(group.servers[0])
    }
    let server = try Server(configuration: configuration, store: store ?? MemoryRunStore(), log: ServerLog(isEnabled: false))
    try server.start()
    defer { server.shutdown() }
    return try body(server)
}

/// Makes sure the server's loop has handled what was sent to it before: another connection's ping round trip.
public func settleLoop(of server: Server) throws {
    let other = try TestClient(port: server.port)
    try other.send("ping:")
    try other.expectNext("ok:ping")
    other.close()
}

/// A runner connection that has claimed `name`; returns the client and its key.
public func connectRunner(_ name: String, to server: Server, timeout: Double = 5) throws -> (TestClient, String) {
    let client = try TestClient(port: server.port)
    try client.send("iam:\(name)")
    let reply = try ServerEvent(line: client.expect("ok:iam", timeout: timeout))
    guard case .ok(let ok) = reply, let key = ok["key"] else { throw TestClient.Unexpected(expected: "key", got: reply.line) }
    return (client, key)
}

/// Fixes along a straight line north from a start, one per second at `speed` m/s, timestamps from `start`.
public func straightRun(count: Int, from start: Double = Date().timeIntervalSince1970 - 1, speed: Double = 3,
                 latitude: Double = 51.5, longitude: Double = -0.12) -> [String] {
    let metresPerDegree = 111_229.0
    return (0..<count).map { index in
        let lat = latitude + Double(index) * speed / metresPerDegree
        return "loc:\(lat),\(longitude),5,\(start + Double(index))"
    }
}
